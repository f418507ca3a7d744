package data

import (
	"bytes"
	"compress/gzip"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/badinput"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// fuzzMaxPixels keeps the image fuzz target's decodes small; the default
// cap is tested on its own (TestImageCap).
const fuzzMaxPixels = 1 << 16

func fuzzImages(f *testing.F) {
	img := image.NewRGBA(image.Rect(0, 0, 5, 4))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	f.Add(bytes.Clone(b.Bytes()))
	b.Reset()
	jpeg.Encode(&b, img, nil)
	f.Add(bytes.Clone(b.Bytes()))
	b.Reset()
	gray := image.NewGray(image.Rect(0, 0, 3, 3))
	gray.Set(1, 1, color.Gray{200})
	png.Encode(&b, gray)
	f.Add(bytes.Clone(b.Bytes()))
	f.Add(badinput.PNGBomb(300, 300))
}

// FuzzImage decodes whatever bytes an image file holds, in each colour
// mode, resized or not: errors are fine, a panic or a decode past the cap
// is not.
func FuzzImage(f *testing.F) {
	fuzzImages(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, r := range []*ImageReader{
			{Mode: Native, MaxPixels: fuzzMaxPixels},
			{Mode: Color, Height: 7, Width: 3, MaxPixels: fuzzMaxPixels},
			{Mode: Gray, Height: 2, Width: 9, MaxPixels: fuzzMaxPixels},
		} {
			rec, err := r.Decode(b)
			if err != nil {
				continue
			}
			if rec.Height*rec.Width > fuzzMaxPixels || len(rec.Data) != rec.Channels*rec.Height*rec.Width {
				t.Fatalf("decoded %dx%dx%d with %d bytes", rec.Channels, rec.Height, rec.Width, len(rec.Data))
			}
		}
	})
}

// FuzzDatum parses whatever bytes a database record holds as a Datum and
// transforms it as the Data layer does (crop, mirror, scale, mean values;
// encoded records decoded): errors are fine, a panic is not.
func FuzzDatum(f *testing.F) {
	for _, d := range []*caffepb.Datum{
		{Channels: proto.Int32(3), Height: proto.Int32(4), Width: proto.Int32(4), Data: make([]byte, 48), Label: proto.Int32(3)},
		{Channels: proto.Int32(1), Height: proto.Int32(2), Width: proto.Int32(2), FloatData: []float32{1, 2, 3, 4}},
		{Channels: proto.Int32(2), Height: proto.Int32(1), Width: proto.Int32(1), Data: []byte{1}},
	} {
		b, _ := proto.Marshal(d)
		f.Add(b)
	}
	var img bytes.Buffer
	png.Encode(&img, image.NewGray(image.Rect(0, 0, 4, 4)))
	enc, _ := proto.Marshal(&caffepb.Datum{Encoded: proto.Bool(true), Data: img.Bytes()})
	f.Add(enc)
	tf, err := NewTransformer[float32](&caffepb.TransformationParameter{
		CropSize: proto.Uint32(2), Mirror: proto.Bool(true), Scale: proto.Float32(0.5), MeanValue: []float32{1},
	}, caffepb.Phase_TRAIN, 1)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r DatumRecord
		if r.Parse(b) != nil {
			return
		}
		if r.Encoded {
			dec := ImageReader{MaxPixels: fuzzMaxPixels}
			d, err := dec.Decode(r.Data)
			if err != nil {
				return
			}
			r = d
		}
		shape, err := tf.InferRecordShape(&r)
		if err != nil {
			return
		}
		n := 1
		for _, d := range shape {
			n *= d
		}
		if n > 1<<20 {
			t.Fatalf("a %d-byte record claims an item of %d values", len(b), n)
		}
		tf.TransformRecord(&r, make([]float32, n))
	})
}

// FuzzIDX reads whatever bytes an IDX file holds, plain and gzipped, item
// by item as convert_mnist_data does: errors are fine, a panic is not.
// Items claimed larger than 1 MiB are left unread (the header alone must
// not have allocated them).
func FuzzIDX(f *testing.F) {
	f.Add(idxBytes(0x08, []int{2, 2, 2}, []byte{1, 2, 3, 4, 5, 6, 7, 8}))
	f.Add(idxBytes(0x08, []int{3}, []byte{7, 8, 9}))
	f.Add(idxBytes(0x08, []int{1 << 30, 1 << 30}, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(b)
		zw.Close()
		for i, in := range [][]byte{b, z.Bytes()} {
			path := filepath.Join(t.TempDir(), "x.idx")
			if err := os.WriteFile(path, in, 0o644); err != nil {
				t.Fatal(err)
			}
			x, err := OpenIDX(path)
			if err != nil {
				continue
			}
			if x.ItemSize() <= 1<<20 {
				buf := make([]byte, x.ItemSize())
				for range min(x.Count(), 1000) {
					if x.ReadItem(buf) != nil {
						break
					}
				}
			}
			if err := x.Close(); err != nil && i < 0 {
				t.Fatal(err)
			}
		}
	})
}

// FuzzMeanFile loads whatever bytes a mean file (.binaryproto) holds as a
// transformer's mean_file and transforms a datum with it: errors are fine,
// a panic is not.
func FuzzMeanFile(f *testing.F) {
	for _, p := range []*caffepb.BlobProto{
		{Num: proto.Int32(1), Channels: proto.Int32(1), Height: proto.Int32(2), Width: proto.Int32(2), Data: []float32{1, 2, 3, 4}},
		{Shape: &caffepb.BlobShape{Dim: []int64{1, 2, 2}}, Data: []float32{1, 2, 3, 4}},
		{Shape: &caffepb.BlobShape{Dim: []int64{1 << 31}}},
	} {
		b, _ := proto.Marshal(p)
		f.Add(b)
	}
	datum := DatumRecord{Channels: 1, Height: 2, Width: 2, Data: []byte{1, 2, 3, 4}}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "mean.binaryproto")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		tf, err := NewTransformer[float32](&caffepb.TransformationParameter{MeanFile: proto.String(path)}, caffepb.Phase_TEST, 1)
		if err != nil {
			return
		}
		tf.TransformRecord(&datum, make([]float32, 4))
	})
}

// FuzzAnnotatedDatum parses whatever bytes a record of SSD's databases
// holds as an AnnotatedDatum and augments it as AnnotatedData does, with
// every one of SSD's transformations on (distortion, expansion, sampling,
// a resize with a random interpolation, crop, mirror): errors are fine, a
// panic, boxes outside the output or an output of the wrong size are not.
func FuzzAnnotatedDatum(f *testing.F) {
	box := func(x0, y0, x1, y1 float32) *caffepb.NormalizedBBox {
		return &caffepb.NormalizedBBox{Xmin: proto.Float32(x0), Ymin: proto.Float32(y0), Xmax: proto.Float32(x1), Ymax: proto.Float32(y1)}
	}
	var img bytes.Buffer
	png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 6, 5)))
	for _, d := range []*caffepb.AnnotatedDatum{
		{Datum: &caffepb.Datum{Channels: proto.Int32(3), Height: proto.Int32(6), Width: proto.Int32(8), Data: make([]byte, 144)},
			Type: caffepb.AnnotatedDatum_BBOX.Enum(), AnnotationGroup: []*caffepb.AnnotationGroup{{GroupLabel: proto.Int32(1),
				Annotation: []*caffepb.Annotation{{Bbox: box(0.1, 0.2, 0.6, 0.9)}, {Bbox: box(-0.5, 0.5, 2, 0.4)}}}}},
		{Datum: &caffepb.Datum{Encoded: proto.Bool(true), Data: img.Bytes()}, AnnotationGroup: []*caffepb.AnnotationGroup{{
			Annotation: []*caffepb.Annotation{{Bbox: box(0, 0, 1, 1)}}}}},
		{Datum: &caffepb.Datum{Channels: proto.Int32(1), Height: proto.Int32(2), Width: proto.Int32(2), FloatData: []float32{1, 2, 3, 4}}},
	} {
		b, _ := proto.Marshal(d)
		f.Add(b)
	}
	f32 := proto.Float32
	tp := &caffepb.TransformationParameter{Mirror: proto.Bool(true), CropSize: proto.Uint32(4), MeanValue: []float32{3},
		ResizeParam: &caffepb.ResizeParameter{Height: proto.Uint32(6), Width: proto.Uint32(7),
			InterpMode: []caffepb.ResizeParameter_InterpMode{caffepb.ResizeParameter_LINEAR, caffepb.ResizeParameter_AREA,
				caffepb.ResizeParameter_NEAREST, caffepb.ResizeParameter_CUBIC, caffepb.ResizeParameter_LANCZOS4}},
		DistortParam: &caffepb.DistortionParameter{BrightnessProb: f32(0.5), BrightnessDelta: f32(30), ContrastProb: f32(0.5),
			ContrastLower: f32(0.5), ContrastUpper: f32(1.5), SaturationProb: f32(0.5), SaturationLower: f32(0.5), SaturationUpper: f32(1.5),
			HueProb: f32(0.5), HueDelta: f32(20), RandomOrderProb: f32(0.5)},
		ExpandParam:    &caffepb.ExpansionParameter{Prob: f32(0.5), MaxExpandRatio: f32(3)},
		EmitConstraint: &caffepb.EmitConstraint{EmitType: caffepb.EmitConstraint_MIN_OVERLAP.Enum(), EmitOverlap: f32(0.3)}}
	samplers := []*caffepb.BatchSampler{{Sampler: &caffepb.Sampler{MinScale: f32(0.3), MaxScale: f32(1), MinAspectRatio: f32(0.5), MaxAspectRatio: f32(2)},
		SampleConstraint: &caffepb.SampleConstraint{MinJaccardOverlap: f32(0.1)}, MaxTrials: proto.Uint32(5)}}
	aug, err := NewAugmenter[float32](tp, samplers, caffepb.Phase_TRAIN, 1)
	if err != nil {
		f.Fatal(err)
	}
	var s AugmentScratch
	f.Fuzz(func(t *testing.T, b []byte) {
		var r AnnotatedRecord
		if r.Parse(b) != nil {
			return
		}
		img := r.Datum
		if img.Encoded {
			dec := ImageReader{MaxPixels: fuzzMaxPixels}
			d, err := dec.Decode(img.Data)
			if err != nil {
				return
			}
			img = d
		}
		if _, _, _, err := img.Shape(); err != nil || img.Channels*img.Height*img.Width > 1<<16 {
			return
		}
		var p AugmentPlan
		if aug.Plan(&img, r.Objects, &p) != nil {
			return
		}
		if err := aug.Apply(&img, &p, make([]float32, p.Channels*p.Height*p.Width), &s); err != nil {
			t.Fatalf("Apply after a successful Plan: %v", err)
		}
		for _, o := range p.Objects {
			b := o.Box
			if !(b.XMin >= 0 && b.XMax <= 1 && b.YMin >= 0 && b.YMax <= 1 && b.XMin <= b.XMax && b.YMin <= b.YMax) {
				t.Fatalf("box %+v outside the output", b)
			}
		}
	})
}

// FuzzAnnotationFile reads whatever an annotation file holds as VOC XML,
// SSD's COCO JSON and text: errors are fine, a panic is not.
func FuzzAnnotationFile(f *testing.F) {
	f.Add([]byte(`<annotation><size><width>20</width><height>10</height></size><object><name>a</name><difficult>1</difficult><bndbox><xmin>1</xmin><ymin>2</ymin><xmax>9</xmax><ymax>8</ymax></bndbox></object></annotation>`))
	f.Add([]byte(`{"image": {"height": 10, "width": 20}, "annotation": [{"category_id": 1, "bbox": [1, 2, 3, 4]}]}`))
	f.Add([]byte("1 0 0 5 5\n2 1 1 3 3\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "anno")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"xml", "json", "txt"} {
			AnnotationFile{Format: format, Labels: map[string]int32{"a": 1, "1": 2}, Log: discardLogger}.Read(path, 10, 20)
		}
	})
}

// discardLogger drops the warnings of fuzzed annotation files.
var discardLogger = slog.New(slog.DiscardHandler)
