package data

import (
	"bytes"
	"compress/gzip"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
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
