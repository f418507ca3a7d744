package classify_test

import (
	"image"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gocaffe/gocaffe/classify"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/protoio"
)

// pickNet's output is the input's first two pixels: an InnerProduct whose
// weights pick them.
const pickNet = `name: "pick"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 1 dim: 2 dim: 2 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" inner_product_param { num_output: 2 } }
`

func setUp(t *testing.T) (model, weights string) {
	dir := t.TempDir()
	model, weights = filepath.Join(dir, "pick.prototxt"), filepath.Join(dir, "pick.caffemodel")
	os.WriteFile(model, []byte(pickNet), 0o644)
	n, err := net.NewFromFile[float32](model, net.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	w := n.Params()[0].MutableCPUData() // 2 x 4
	clear(w)
	w[0], w[5] = 1, 1
	clear(n.Params()[1].MutableCPUData())
	if err := protoio.WriteProtoToBinaryFile(n.ToProto(false), weights); err != nil {
		t.Fatal(err)
	}
	return model, weights
}

// gray2x3 is [a b c; d e f] = [10 20 30; 40 50 60].
func gray2x3() image.Image {
	img := image.NewGray(image.Rect(0, 0, 3, 2))
	copy(img.Pix, []byte{10, 20, 30, 40, 50, 60})
	return img
}

// The center crop, the mean and the scale, and the ten crops of
// oversampling averaged: worked out by hand on a 2x3 image and a 2x2 input.
func TestPreprocessing(t *testing.T) {
	model, weights := setUp(t)
	opts := classify.Options{ResizeHeight: 2, ResizeWidth: 3, MeanValues: []float32{10}, Scale: 0.5, Logger: slog.New(slog.DiscardHandler)}
	c, err := classify.New(model, weights, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.Probabilities(gray2x3())
	if err != nil {
		t.Fatal(err)
	}
	// Center crop at column (3-2)/2 = 0: [a b; d e]; outputs (a-10)/2, (b-10)/2.
	if p[0] != 0 || p[1] != 5 {
		t.Errorf("center crop: %v, want [0 5]", p)
	}
	opts.Oversample = true
	o, err := classify.New(model, weights, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	p, err = o.Probabilities(gray2x3())
	if err != nil {
		t.Fatal(err)
	}
	// Crops at columns 0, 1, 0, 1, 0 and their mirrors: each output is
	// (3a + 5b + 2c)/10 of the centred, scaled pixels.
	a, b, cc := float32(0), float32(5), float32(10)
	want := (3*a + 5*b + 2*cc) / 10
	for i, v := range p {
		if math.Abs(float64(v-want)) > 1e-5 {
			t.Errorf("oversampled output %d: %v, want %v", i, v, want)
		}
	}
	top, err := o.Top(gray2x3(), 5)
	if err != nil || len(top) != 2 || top[0].Probability < top[1].Probability {
		t.Errorf("Top: %v, %v", top, err)
	}
}

// Options the net cannot take are errors at New.
func TestBadOptions(t *testing.T) {
	model, weights := setUp(t)
	for name, o := range map[string]classify.Options{
		"resize smaller than the input": {ResizeHeight: 1, ResizeWidth: 1},
		"mean values for 3 channels":    {MeanValues: []float32{1, 2, 3}},
		"mean file and values":          {MeanFile: "m.binaryproto", MeanValues: []float32{1}},
	} {
		o.Logger = slog.New(slog.DiscardHandler)
		if c, err := classify.New(model, weights, o); err == nil {
			c.Close()
			t.Errorf("%s: no error", name)
		}
	}
}

// Top of fewer than one class is an error, not a panic; more classes than
// the net has gives them all.
func TestTopCount(t *testing.T) {
	model, weights := setUp(t)
	c, err := classify.New(model, weights, classify.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, k := range []int{-1, 0, math.MinInt} {
		if top, err := c.Top(gray2x3(), k); err == nil {
			t.Errorf("Top(%d) = %v, want an error", k, top)
		}
	}
	if top, err := c.Top(gray2x3(), math.MaxInt); err != nil || len(top) != 2 {
		t.Errorf("Top(MaxInt) = %v, %v; want both classes", top, err)
	}
}
