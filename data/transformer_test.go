package data

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// seq returns the bytes 0, 1, ..., n-1.
func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func rawDatum(c, h, w int, pix []byte) *caffepb.Datum {
	return &caffepb.Datum{Channels: i32(c), Height: i32(h), Width: i32(w), Data: pix, Label: i32(1)}
}

func tparam(t testing.TB, text string) *caffepb.TransformationParameter {
	t.Helper()
	p := &caffepb.TransformationParameter{}
	if err := protoio.ParseText([]byte(text), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func newTF[T float32 | float64](t testing.TB, text string, phase caffepb.Phase, seed uint64) *Transformer[T] {
	t.Helper()
	tf, err := NewTransformer[T](tparam(t, text), phase, seed)
	if err != nil {
		t.Fatal(err)
	}
	return tf
}

// transform runs tf on d into a slice of the inferred item size.
func transform[T float32 | float64](t testing.TB, tf *Transformer[T], d *caffepb.Datum) []T {
	t.Helper()
	shape, err := tf.InferBlobShape(d)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]T, shape[1]*shape[2]*shape[3])
	if err := tf.Transform(d, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func expect[T float32 | float64](t *testing.T, what string, got []T, want ...T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

func TestTransformIdentityAndScale(t *testing.T) {
	d := rawDatum(2, 1, 3, []byte{0, 1, 2, 250, 254, 255})
	expect(t, "no transformation", transform(t, newTF[float32](t, ``, caffepb.Phase_TRAIN, 1), d), 0, 1, 2, 250, 254, 255)
	expect(t, "scale 0.5", transform(t, newTF[float64](t, `scale: 0.5`, caffepb.Phase_TEST, 1), d), 0, 0.5, 1, 125, 127, 127.5)
	f := &caffepb.Datum{Channels: i32(1), Height: i32(2), Width: i32(2), FloatData: []float32{-1.5, 0, 2.25, 1000}}
	expect(t, "float_data, scale 2", transform(t, newTF[float32](t, `scale: 2`, caffepb.Phase_TRAIN, 1), f), -3, 0, 4.5, 2000)
}

// TestTransformCropTest: in TEST the crop is the centre, (H - crop) / 2
// rounded down, for every datum.
func TestTransformCropTest(t *testing.T) {
	d := rawDatum(2, 5, 4, seq(40)) // channel 1 holds 20..39
	tf := newTF[float32](t, `crop_size: 2`, caffepb.Phase_TEST, 1)
	shape, err := tf.InferBlobShape(d)
	if err != nil || !slices.Equal(shape, []int{1, 2, 2, 2}) {
		t.Fatalf("InferBlobShape = %v, %v; want [1 2 2 2]", shape, err)
	}
	for range 3 {
		// Offsets (5-2)/2 = 1 row and (4-2)/2 = 1 column.
		expect(t, "centre crop", transform(t, tf, d), 5, 6, 9, 10, 25, 26, 29, 30)
	}
}

// TestTransformCropTrain: in TRAIN every offset in [0, H-crop] x [0,
// W-crop] occurs, and the output is always the window at one of them.
func TestTransformCropTrain(t *testing.T) {
	const h, w, crop = 4, 5, 3
	d := rawDatum(1, h, w, seq(h*w))
	tf := newTF[float32](t, `crop_size: 3`, caffepb.Phase_TRAIN, 7)
	seen := map[[2]int]bool{}
	for range 200 {
		out := transform(t, tf, d)
		off := [2]int{int(out[0]) / w, int(out[0]) % w}
		for y := range crop {
			for x := range crop {
				if want := float32((off[0]+y)*w + off[1] + x); out[y*crop+x] != want {
					t.Fatalf("crop at %v: element (%d, %d) = %v, want %v", off, y, x, out[y*crop+x], want)
				}
			}
		}
		seen[off] = true
	}
	if len(seen) != (h-crop+1)*(w-crop+1) {
		t.Errorf("saw %d crop offsets in 200 draws, want all %d", len(seen), (h-crop+1)*(w-crop+1))
	}
}

// TestTransformMirror: with mirror set, each datum comes out either as it
// is or with its rows reversed, both happen, in TRAIN and (as in Caffe,
// whose DataTransformer draws the mirror coin in every phase) in TEST; the
// sequence is fixed by the seed and restarts with Reseed.
func TestTransformMirror(t *testing.T) {
	d := rawDatum(2, 2, 3, seq(12))
	plain := []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	mirrored := []float32{2, 1, 0, 5, 4, 3, 8, 7, 6, 11, 10, 9}
	for _, phase := range []caffepb.Phase{caffepb.Phase_TRAIN, caffepb.Phase_TEST} {
		tf := newTF[float32](t, `mirror: true`, phase, 3)
		var flips []bool
		for range 64 {
			out := transform(t, tf, d)
			switch {
			case slices.Equal(out, plain):
				flips = append(flips, false)
			case slices.Equal(out, mirrored):
				flips = append(flips, true)
			default:
				t.Fatalf("%v: output %v is neither the datum nor its mirror", phase, out)
			}
		}
		if n := strings.Count(sprintBools(flips), "1"); n < 16 || n > 48 {
			t.Errorf("%v: %d of 64 outputs mirrored, want about half", phase, n)
		}
		tf.Reseed(3)
		again := newTF[float32](t, `mirror: true`, phase, 3)
		for i, want := range flips {
			a, b := transform(t, tf, d), transform(t, again, d)
			if !slices.Equal(a, b) || slices.Equal(a, mirrored) != want {
				t.Fatalf("%v: draw %d differs after Reseed or between equal seeds", phase, i)
			}
		}
	}
}

func sprintBools(v []bool) string {
	var b strings.Builder
	for _, x := range v {
		if x {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	return b.String()
}

func TestTransformMeanValues(t *testing.T) {
	d := rawDatum(3, 1, 2, []byte{10, 20, 30, 40, 50, 60})
	expect(t, "one mean_value for every channel, then scale",
		transform(t, newTF[float32](t, `mean_value: 10 scale: 0.5`, caffepb.Phase_TEST, 1), d), 0, 5, 10, 15, 20, 25)
	expect(t, "one mean_value per channel",
		transform(t, newTF[float64](t, `mean_value: 1 mean_value: 2 mean_value: 3`, caffepb.Phase_TEST, 1), d), 9, 19, 28, 38, 47, 57)
	tf := newTF[float32](t, `mean_value: 1 mean_value: 2`, caffepb.Phase_TEST, 1)
	if _, err := tf.InferBlobShape(d); err == nil || !strings.Contains(err.Error(), "either 1 mean_value or as many as channels: 3") {
		t.Errorf("2 mean values for 3 channels: %v", err)
	}
}

// writeMean writes a 1 x C x H x W mean BlobProto with the legacy fields,
// as compute_image_mean does.
func writeMean(t *testing.T, c, h, w int, vals []float32) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mean.binaryproto")
	bp := &caffepb.BlobProto{Num: i32(1), Channels: i32(c), Height: i32(h), Width: i32(w), Data: vals}
	if err := protoio.WriteProtoToBinaryFile(bp, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTransformMeanFileCropMirror combines every option in TRAIN: the
// expected values are computed by hand from the window and mirror coin the
// seed gives (drawn in Caffe's order: mirror, row offset, column offset).
func TestTransformMeanFileCropMirror(t *testing.T) {
	const h, w, crop, seed = 3, 4, 2, 11
	mean := make([]float32, h*w)
	for i := range mean {
		mean[i] = float32(i) * 0.5
	}
	path := writeMean(t, 1, h, w, mean)
	d := rawDatum(1, h, w, []byte{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 20, 30})
	tf := newTF[float32](t, `crop_size: 2 mirror: true scale: 2 mean_file: "`+path+`"`, caffepb.Phase_TRAIN, seed)
	rng := mathfn.NewRNG(seed)
	for range 20 {
		mirror := rng.IntN(2) == 1
		hOff, wOff := rng.IntN(h-crop+1), rng.IntN(w-crop+1)
		want := make([]float32, crop*crop)
		for y := range crop {
			for x := range crop {
				src := (hOff+y)*w + wOff + x
				dx := x
				if mirror {
					dx = crop - 1 - x
				}
				want[y*crop+dx] = (float32(d.Data[src]) - mean[src]) * 2
			}
		}
		expect(t, "mean file, crop, mirror, scale", transform(t, tf, d), want...)
	}
}

func TestTransformErrors(t *testing.T) {
	mean := writeMean(t, 1, 2, 2, []float32{1, 2, 3, 4})
	if _, err := NewTransformer[float32](tparam(t, `mean_file: "`+mean+`" mean_value: 1`), caffepb.Phase_TRAIN, 1); err == nil ||
		!strings.Contains(err.Error(), "cannot specify mean_file and mean_value") {
		t.Errorf("mean_file and mean_value: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "nope.binaryproto")
	if _, err := NewTransformer[float32](tparam(t, `mean_file: "`+missing+`"`), caffepb.Phase_TRAIN, 1); err == nil ||
		!strings.Contains(err.Error(), missing) {
		t.Errorf("missing mean file: %v", err)
	}
	if _, err := NewTransformer[float32](tparam(t, `force_color: true force_gray: true`), caffepb.Phase_TRAIN, 1); err == nil ||
		!strings.Contains(err.Error(), "both force_color and force_gray") {
		t.Errorf("force_color and force_gray: %v", err)
	}
	tf := newTF[float32](t, `mean_file: "`+mean+`"`, caffepb.Phase_TEST, 1)
	if err := tf.Transform(rawDatum(1, 2, 3, seq(6)), make([]float32, 6)); err == nil ||
		!strings.Contains(err.Error(), mean) || !strings.Contains(err.Error(), "1x2x2") {
		t.Errorf("mean of another shape: %v", err)
	}
	tf = newTF[float32](t, `crop_size: 3`, caffepb.Phase_TEST, 1)
	if err := tf.Transform(rawDatum(1, 2, 5, seq(10)), make([]float32, 9)); err == nil || !strings.Contains(err.Error(), "crop_size 3 is larger") {
		t.Errorf("crop larger than the datum: %v", err)
	}
	tf = newTF[float32](t, ``, caffepb.Phase_TEST, 1)
	if err := tf.Transform(rawDatum(1, 2, 2, seq(4)), make([]float32, 5)); err == nil || !strings.Contains(err.Error(), "output item holds 5") {
		t.Errorf("output of the wrong size: %v", err)
	}
	if err := tf.Transform(rawDatum(1, 2, 2, seq(3)), make([]float32, 4)); err == nil || !strings.Contains(err.Error(), "holds 3 bytes") {
		t.Errorf("short payload: %v", err)
	}
	if err := tf.Transform(&caffepb.Datum{Data: []byte("not an image"), Encoded: proto.Bool(true)}, make([]float32, 4)); err == nil ||
		!strings.Contains(err.Error(), "decoding an encoded datum") {
		t.Errorf("undecodable datum: %v", err)
	}
}

// encodedPNG returns a datum holding a 3x2 PNG whose pixel (x, y) is
// (R, G, B) = (10x+1, 20y+2, 3).
func encodedPNG(t *testing.T) *caffepb.Datum {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	for y := range 2 {
		for x := range 3 {
			img.Set(x, y, color.RGBA{uint8(10*x + 1), uint8(20*y + 2), 3, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return &caffepb.Datum{Data: buf.Bytes(), Encoded: proto.Bool(true), Label: i32(4)}
}

// TestTransformEncoded decodes to B, G, R planes (Caffe's OpenCV order),
// or to one gray plane with force_gray, and then transforms.
func TestTransformEncoded(t *testing.T) {
	d := encodedPNG(t)
	tf := newTF[float32](t, `mirror: false`, caffepb.Phase_TEST, 1)
	shape, err := tf.InferBlobShape(d)
	if err != nil || !slices.Equal(shape, []int{1, 3, 2, 3}) {
		t.Fatalf("InferBlobShape = %v, %v; want [1 3 2 3]", shape, err)
	}
	expect(t, "BGR planes", transform(t, tf, d), 3, 3, 3, 3, 3, 3, 2, 2, 2, 22, 22, 22, 1, 11, 21, 1, 11, 21)
	gray := newTF[float32](t, `force_gray: true crop_size: 1`, caffepb.Phase_TEST, 1)
	shape, err = gray.InferBlobShape(d)
	if err != nil || !slices.Equal(shape, []int{1, 1, 1, 1}) {
		t.Fatalf("force_gray, crop 1: InferBlobShape = %v, %v; want [1 1 1 1]", shape, err)
	}
	// Centre pixel (1, 0): R 11, G 2, B 3 through color.GrayModel.
	want := float32(uint8((19595*uint32(11)*0x101 + 38470*uint32(2)*0x101 + 7471*uint32(3)*0x101 + 1<<15) >> 24))
	expect(t, "gray centre", transform(t, gray, d), want)
}

// TestTransformDoesNotAllocate: a raw datum goes through crop, mirror,
// mean and scale without allocating.
func TestTransformDoesNotAllocate(t *testing.T) {
	const c, h, w = 3, 32, 32
	path := writeMean(t, c, h, w, make([]float32, c*h*w))
	tf := newTF[float32](t, `crop_size: 28 mirror: true scale: 0.1 mean_file: "`+path+`"`, caffepb.Phase_TRAIN, 1)
	rec := marshal(t, rawDatum(c, h, w, seq(c*h*w)))
	var r DatumRecord
	out := make([]float32, c*28*28)
	n := testing.AllocsPerRun(100, func() {
		if err := r.Parse(rec); err != nil {
			t.Fatal(err)
		}
		if err := tf.TransformRecord(&r, out); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("parse and transform allocate %v times per datum, want 0", n)
	}
}
