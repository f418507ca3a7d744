package datalayer_test

import (
	"fmt"
	"image"
	"image/color"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// annotated makes an AnnotatedDatum of type BBOX around d with one group
// per entry of boxes (label -> corners).
func annotated(d *caffepb.Datum, groups ...*caffepb.AnnotationGroup) *caffepb.AnnotatedDatum {
	return &caffepb.AnnotatedDatum{Datum: d, Type: caffepb.AnnotatedDatum_BBOX.Enum(), AnnotationGroup: groups}
}

func group(label int32, boxes ...[5]float32) *caffepb.AnnotationGroup {
	g := &caffepb.AnnotationGroup{GroupLabel: proto.Int32(label)}
	for i, b := range boxes {
		g.Annotation = append(g.Annotation, &caffepb.Annotation{InstanceId: proto.Int32(int32(i)),
			Bbox: &caffepb.NormalizedBBox{Xmin: proto.Float32(b[0]), Ymin: proto.Float32(b[1]), Xmax: proto.Float32(b[2]), Ymax: proto.Float32(b[3]), Difficult: proto.Bool(b[4] != 0)}})
	}
	return g
}

func writeAnnotated(t *testing.T, recs []*caffepb.AnnotatedDatum) string {
	t.Helper()
	out := make([][]byte, len(recs))
	for i, r := range recs {
		b, err := proto.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return writeRecords(t, out)
}

func annotatedText(src string, batch int, transform, rest string) string {
	return fmt.Sprintf(`type: "AnnotatedData" data_param { source: "%s" backend: %v batch_size: %d } transform_param { %s } %s`,
		src, testBackend, batch, transform, rest)
}

// Without augmentation the images pass as they are and the label top holds
// SSD's rows: item, label, instance, corners, difficult, group by group;
// a batch without boxes gets one row of -1.
func TestAnnotatedDataRows(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		d := numbered(4, 3, 4, 5)
		src := writeAnnotated(t, []*caffepb.AnnotatedDatum{
			annotated(d[0], group(1, [5]float32{0.1, 0.2, 0.3, 0.4, 0}, [5]float32{0.5, 0.5, 1, 1, 1}), group(2, [5]float32{0, 0, 0.5, 0.25, 0})),
			annotated(d[1]),
			annotated(d[2], group(7, [5]float32{0.25, 0.25, 0.75, 0.75, 0})),
			annotated(d[3]),
		})
		l, top := setUpSource[float32](t, annotatedText(src, 2, "", ""), 1, 2)
		if got := top[1].ShapeString(); got != "1 3 8 (24)" && got != "1 1 3 8 (24)" {
			t.Errorf("label shape after setup %s, want 1 x 1 x 3 x 8 (the first record's boxes)", got)
		}
		want := [][]float32{
			{0, 1, 0, 0.1, 0.2, 0.3, 0.4, 0, 0, 1, 1, 0.5, 0.5, 1, 1, 1, 0, 2, 0, 0, 0, 0.5, 0.25, 0},
			{0, 7, 0, 0.25, 0.25, 0.75, 0.75, 0},
			{0, 1, 0, 0.1, 0.2, 0.3, 0.4, 0, 0, 1, 1, 0.5, 0.5, 1, 1, 1, 0, 2, 0, 0, 0, 0.5, 0.25, 0},
		}
		for pass, b := range batches(t, l, top, 3) {
			if got := fmt.Sprint(b[1]); got != fmt.Sprint(want[pass]) {
				t.Errorf("pass %d labels %v, want %v", pass, got, want[pass])
			}
			first := 2 * pass % 4
			for j, v := range b[0][:60] {
				if want := float32(itemValue(first, j)); v != want {
					t.Fatalf("pass %d value %d = %v, want %v", pass, j, v, want)
				}
			}
		}
		l2, top2 := setUpSource[float32](t, annotatedText(src, 1, "", ""), 1, 2)
		b := batches(t, l2, top2, 2)
		if got := fmt.Sprint(b[1][1]); got != "[-1 -1 -1 -1 -1 -1 -1 -1]" {
			t.Errorf("a batch without boxes: labels %v, want one row of -1", got)
		}
	})
}

// Records without an annotation type give their datum labels, batch x 1 x
// 1 x 1; an anno_type in the layer makes them rows.
func TestAnnotatedDataClassification(t *testing.T) {
	d := numbered(3, 1, 2, 2)
	src := writeAnnotated(t, []*caffepb.AnnotatedDatum{{Datum: d[0]}, {Datum: d[1]}, {Datum: d[2]}})
	l, top := setUpSource[float32](t, annotatedText(src, 3, "", ""), 1, 2)
	b := batches(t, l, top, 1)
	if got := fmt.Sprint(b[0][1]); got != "[100 101 102]" || top[1].ShapeString() != "3 1 1 1 (3)" {
		t.Errorf("labels %v of shape %s, want [100 101 102] of 3 x 1 x 1 x 1", got, top[1].ShapeString())
	}
	l2, top2 := setUpSource[float32](t, annotatedText(src, 3, "", "annotated_data_param { anno_type: BBOX }"), 1, 2)
	b = batches(t, l2, top2, 1)
	if got := fmt.Sprint(b[0][1]); got != "[-1 -1 -1 -1 -1 -1 -1 -1]" {
		t.Errorf("anno_type BBOX on records without boxes: %v, want one row of -1", got)
	}
}

// Mirroring flips the boxes with the pixels: each item's left column,
// which holds its own value, tells whether it was mirrored.
func TestAnnotatedDataMirror(t *testing.T) {
	const w = 8
	var recs []*caffepb.AnnotatedDatum
	for i := range 16 {
		pix := make([]byte, w)
		pix[0] = byte(100 + i)
		recs = append(recs, annotated(&caffepb.Datum{Channels: proto.Int32(1), Height: proto.Int32(1), Width: proto.Int32(w), Data: pix},
			group(1, [5]float32{0, 0, 0.25, 1, 0})))
	}
	src := writeAnnotated(t, recs)
	l, top := setUpSource[float32](t, annotatedText(src, 16, "mirror: true", ""), 3, 2)
	b := batches(t, l, top, 1)[0]
	mirrored := 0
	for i := range 16 {
		img, row := b[0][i*w:(i+1)*w], b[1][i*8:(i+1)*8]
		flipped := img[w-1] == float32(100+i)
		want := []float32{0, 0.25}
		if flipped {
			want = []float32{0.75, 1}
			mirrored++
		} else if img[0] != float32(100+i) {
			t.Fatalf("item %d: image %v", i, img)
		}
		if row[0] != float32(i) || row[3] != want[0] || row[5] != want[1] {
			t.Errorf("item %d (mirrored %v): row %v, want x from %v to %v", i, flipped, row, want[0], want[1])
		}
	}
	if mirrored == 0 || mirrored == 16 {
		t.Errorf("%d of 16 items mirrored", mirrored)
	}
}

// Encoded images of different sizes become one size with resize_param;
// the boxes are normalized, so WARP leaves them where they were.
func TestAnnotatedDataResizeEncoded(t *testing.T) {
	var recs []*caffepb.AnnotatedDatum
	for i, size := range [][2]int{{30, 20}, {17, 41}, {64, 64}} {
		img := image.NewRGBA(image.Rect(0, 0, size[0], size[1]))
		for p := range img.Pix {
			img.Pix[p] = byte(40 * i)
			if p%4 == 3 {
				img.Pix[p] = 255
			}
		}
		img.Set(0, 0, color.RGBA{255, 255, 255, 255})
		recs = append(recs, annotated(&caffepb.Datum{Data: encodePNG(t, img), Encoded: proto.Bool(true)},
			group(int32(i+1), [5]float32{0.5, 0.5, 1, 1, 0})))
	}
	src := writeAnnotated(t, recs)
	l, top := setUpSource[float32](t, annotatedText(src, 3, "resize_param { height: 24 width: 32 resize_mode: WARP interp_mode: LINEAR interp_mode: CUBIC interp_mode: AREA }", ""), 1, 2)
	b := batches(t, l, top, 1)[0]
	if got := top[0].ShapeString(); got != "3 3 24 32 (6912)" {
		t.Errorf("data shape %s", got)
	}
	want := "[0 1 0 0.5 0.5 1 1 0 1 2 0 0.5 0.5 1 1 0 2 3 0 0.5 0.5 1 1 0]"
	if got := fmt.Sprint(b[1]); got != want {
		t.Errorf("labels %v, want %v", got, want)
	}
	// Far from the white corner each image keeps its flat grey.
	for i := range 3 {
		if v := b[0][i*3*24*32+20*32+30]; v != float32(40*i) {
			t.Errorf("image %d: pixel (30, 20) = %v, want %d", i, v, 40*i)
		}
	}
}

func TestAnnotatedDataErrors(t *testing.T) {
	d := numbered(2, 3, 4, 5)
	src := writeAnnotated(t, []*caffepb.AnnotatedDatum{annotated(d[0]), annotated(d[1])})
	for _, c := range []struct{ transform, rest, want string }{
		{"resize_param { height: 10 width: 10 resize_mode: FIT_SMALL_SIZE }", "", "needs batch_size 1"},
		{"noise_param { hist_eq: true }", "", "noise_param"},
		{"resize_param { height: 10 }", "", "height 10 and width 0 must both be positive"},
		{"crop_size: 9", "", "crop 9x9 is larger than the image"},
		{"expand_param { max_expand_ratio: 0.5 }", "", "max_expand_ratio"},
		{"", "annotated_data_param { batch_sampler { sampler { min_scale: 0 } } }", "batch_sampler 1"},
	} {
		err := setUpError(t, annotatedText(src, 2, c.transform, c.rest), 2)
		wantError(t, c.transform+c.rest, err, c.want)
	}
}

// The layer runs with float64 blobs too.
func TestAnnotatedDataFloat64(t *testing.T) {
	d := numbered(1, 1, 2, 2)
	src := writeAnnotated(t, []*caffepb.AnnotatedDatum{annotated(d[0], group(5, [5]float32{0.5, 0, 1, 0.5, 1}))})
	l, top := setUpSource[float64](t, annotatedText(src, 1, "scale: 0.5", ""), 1, 2)
	layertest.Forward(t, l, nil, top)
	if got := fmt.Sprint(top[1].CPUData()); got != "[0 5 0 0.5 0 1 0.5 1]" {
		t.Errorf("labels %v", got)
	}
	var _ *blob.Blob[float64] = top[0]
}

// FIT_SMALL_SIZE gives each image its own size (batch_size 1): the short
// side reaches the resize's, the aspect stays, and the data top takes each
// batch's shape.
func TestAnnotatedDataFitSmallSize(t *testing.T) {
	var recs []*caffepb.AnnotatedDatum
	for _, size := range [][2]int{{20, 10}, {15, 30}} { // width, height
		img := image.NewGray(image.Rect(0, 0, size[0], size[1]))
		recs = append(recs, annotated(&caffepb.Datum{Data: encodePNG(t, img), Encoded: proto.Bool(true)},
			group(1, [5]float32{0.25, 0.25, 0.75, 0.75, 0})))
	}
	src := writeAnnotated(t, recs)
	l, top := setUpSource[float32](t, annotatedText(src, 1, "resize_param { resize_mode: FIT_SMALL_SIZE height: 8 width: 8 }", ""), 1, 2)
	// 20 x 10 (aspect 2) becomes 16 x 8; 15 x 30 (aspect 0.5) 8 x 16.
	for pass, want := range []string{"1 1 8 16 (128)", "1 1 16 8 (128)", "1 1 8 16 (128)"} {
		layertest.Forward(t, l, nil, top)
		if got := top[0].ShapeString(); got != want {
			t.Errorf("pass %d: data %s, want %s", pass, got, want)
		}
		if got := fmt.Sprint(top[1].CPUData()); got != "[0 1 0 0.25 0.25 0.75 0.75 0]" {
			t.Errorf("pass %d: labels %s", pass, got)
		}
	}
}

// Float datums pass through crop, mirror, mean and scale; SSD's pixel
// augmentation is refused for them by name.
func TestAnnotatedDataFloatDatums(t *testing.T) {
	d := &caffepb.Datum{Channels: proto.Int32(1), Height: proto.Int32(2), Width: proto.Int32(2), FloatData: []float32{1.5, -2, 3, 4}}
	src := writeAnnotated(t, []*caffepb.AnnotatedDatum{annotated(d, group(2, [5]float32{0, 0, 1, 1, 0}))})
	l, top := setUpSource[float32](t, annotatedText(src, 1, "scale: 2 mean_value: 1", ""), 1, 2)
	layertest.Forward(t, l, nil, top)
	if got := fmt.Sprint(top[0].CPUData()); got != "[1 -6 4 6]" {
		t.Errorf("data %s, want [1 -6 4 6]", got)
	}
	l2, top2 := setUpSource[float32](t, annotatedText(src, 1, "expand_param { prob: 1 max_expand_ratio: 2 }", ""), 1, 2)
	_, err := layer.Forward(l2, nil, top2)
	wantError(t, "expand_param on float_data", err, "8-bit images")
}
