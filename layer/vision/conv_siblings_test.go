package vision_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/layer/vision"
)

// Sibling convolutions (conv_siblings.go): a lead computing the folded
// passes of convolutions of its window on its bottom gives each its own
// folded output, and each computes its own where the lead's pass no
// longer holds for it.

// siblings is a lead convolution and its siblings on one bottom, each
// with its top.
type siblings struct {
	convs  []layer.Layer[float32]
	bottom []*blob.Blob[float32]
	tops   [][]*blob.Blob[float32]
}

// newSiblings builds folded float32 Convolutions of window (its fields),
// one of each number of outputs, on one bottom of shape; the second is
// folded without a scale (bias and ReLU alone), the others with one.
func newSiblings(t testing.TB, shape []int, window string, outs ...int) *siblings {
	t.Helper()
	s := &siblings{bottom: []*blob.Blob[float32]{layertest.Blob[float32](t, shape...)}}
	layertest.FillGaussian(s.bottom[0], 0, 1, 7)
	for i, o := range outs {
		l := layertest.New[float32](t, fmt.Sprintf(`type: "Convolution" convolution_param { num_output: %d %s
		  weight_filler { type: "gaussian" std: %g } bias_filler { type: "gaussian" std: 0.1 } }`, o, window, 0.05+0.01*float64(i)))
		top := layertest.Blobs[float32](t, 1)
		layertest.SetUp(t, l, s.bottom, top)
		f := convFold(o, true)
		if i == 1 {
			f = &layer.Fold{Act: layer.Activation{Kind: layer.ActReLU}}
		}
		if err := l.(layer.Folder[float32]).SetFold(f); err != nil {
			t.Fatal(err)
		}
		s.convs, s.tops = append(s.convs, l), append(s.tops, top)
	}
	return s
}

// lead makes the first convolution compute the others (or none).
func (s *siblings) lead(t testing.TB, on bool) {
	t.Helper()
	var others []layer.Layer[float32]
	if on {
		others = s.convs[1:]
	}
	if err := s.convs[0].(layer.SiblingFolder[float32]).SetSiblings(others); err != nil {
		t.Fatal(err)
	}
}

// forward runs convolutions from .. in order, and returns their tops.
func (s *siblings) forward(t testing.TB, from int) [][]float32 {
	t.Helper()
	var out [][]float32
	for i, l := range s.convs[from:] {
		if err := l.ForwardCPU(s.bottom, s.tops[from+i]); err != nil {
			t.Fatal(err)
		}
		out = append(out, slices.Clone(s.tops[from+i][0].CPUData()))
	}
	return out
}

// closeTo checks got against want within 1e-4 of want's largest
// magnitude: the stacked pass may take Winograd's way where one alone
// took im2col's.
func closeTo(t *testing.T, what string, got, want []float32) {
	t.Helper()
	scale, diff := 0.0, 0.0
	for i := range want {
		scale = math.Max(scale, math.Abs(float64(want[i])))
		diff = math.Max(diff, math.Abs(float64(got[i])-float64(want[i])))
	}
	if len(got) != len(want) || !(diff <= 1e-4*math.Max(scale, 1e-6)) {
		t.Errorf("%s: max difference %.3g of largest %.3g (%d values, want %d)", what, diff, scale, len(got), len(want))
	}
}

var siblingCases = []struct {
	shape  []int
	window string
	outs   []int
}{
	{[]int{1, 32, 19, 19}, "kernel_size: 3 pad: 1", []int{16, 84}}, // stacked: Winograd's way
	{[]int{2, 24, 10, 10}, "kernel_size: 3 pad: 1", []int{8, 20, 5}},
	{[]int{1, 40, 7, 7}, "kernel_size: 5 pad: 2", []int{16, 24, 8}},
	{[]int{3, 6, 9, 8}, "kernel_size: 3 stride: 2", []int{4, 7}},
}

// The lead's stacked pass gives each convolution what its own folded pass
// gives, and each sibling takes it once.
func TestConvSiblingsMatchAlone(t *testing.T) {
	for _, c := range siblingCases {
		t.Run(fmt.Sprintf("%v_%s", c.shape, c.window), func(t *testing.T) {
			s := newSiblings(t, c.shape, c.window, c.outs...)
			want := s.forward(t, 0)
			s.lead(t, true)
			for pass := range 2 {
				if err := s.convs[0].ForwardCPU(s.bottom, s.tops[0]); err != nil {
					t.Fatal(err)
				}
				if p := vision.SiblingsPending(s.convs[0]); len(p) != len(c.outs)-1 || slices.Contains(p, false) {
					t.Fatalf("pass %d: siblings pending %v after the lead's pass", pass, p)
				}
				got := append([][]float32{slices.Clone(s.tops[0][0].CPUData())}, s.forward(t, 1)...)
				if p := vision.SiblingsPending(s.convs[0]); slices.Contains(p, true) {
					t.Errorf("pass %d: siblings pending %v after theirs", pass, p)
				}
				for i := range want {
					closeTo(t, fmt.Sprintf("pass %d, convolution %d", pass, i), got[i], want[i])
				}
			}
			// Without siblings again, each computes its own.
			s.lead(t, false)
			if vision.SiblingsPending(s.convs[0]) != nil {
				t.Error("SetSiblings(nil) left siblings")
			}
			for i, got := range s.forward(t, 0) {
				if !slices.Equal(got, want[i]) {
					t.Errorf("convolution %d alone after SetSiblings(nil) differs", i)
				}
			}
		})
	}
}

// A sibling computes its own pass where the lead's no longer holds for
// it: the bottom written since, its own fold made again, or its bottom
// reshaped.
func TestConvSiblingsRecompute(t *testing.T) {
	c := siblingCases[1]
	s := newSiblings(t, c.shape, c.window, c.outs...)
	s.lead(t, true)
	s.forward(t, 0)

	// The bottom written after the lead's pass.
	if err := s.convs[0].ForwardCPU(s.bottom, s.tops[0]); err != nil {
		t.Fatal(err)
	}
	x := s.bottom[0].MutableCPUData()
	for i := range x {
		x[i] = -x[i] * 1.5
	}
	got := s.forward(t, 1)
	s.lead(t, false)
	want := s.forward(t, 1)
	for i := range want {
		closeTo(t, fmt.Sprintf("bottom written: sibling %d", i+1), got[i], want[i])
	}

	// A sibling's fold made again after the lead's pass.
	s.lead(t, true)
	if err := s.convs[0].ForwardCPU(s.bottom, s.tops[0]); err != nil {
		t.Fatal(err)
	}
	f := convFold(c.outs[2], true)
	for o := range f.Scale {
		f.Scale[o] *= -2
	}
	if err := s.convs[2].(layer.Folder[float32]).SetFold(f); err != nil {
		t.Fatal(err)
	}
	got = s.forward(t, 1)
	s.lead(t, false)
	want = s.forward(t, 1)
	for i := range want {
		closeTo(t, fmt.Sprintf("fold made again: sibling %d", i+1), got[i], want[i])
	}

	// Another batch: every layer reshaped, the lead's pass first.
	s.lead(t, true)
	shape := slices.Clone(c.shape)
	shape[0] = 3
	if err := s.bottom[0].Reshape(shape); err != nil {
		t.Fatal(err)
	}
	layertest.FillGaussian(s.bottom[0], 0, 1, 11)
	for i, l := range s.convs {
		if err := l.Reshape(s.bottom, s.tops[i]); err != nil {
			t.Fatal(err)
		}
	}
	got = s.forward(t, 0)
	s.lead(t, false)
	want = s.forward(t, 0)
	for i := range want {
		closeTo(t, fmt.Sprintf("batch 3: convolution %d", i), got[i], want[i])
	}
}

// Only convolutions of one window, input and activation are siblings,
// and SetSiblings refuses others.
func TestConvSiblingsRules(t *testing.T) {
	shape := []int{1, 8, 9, 9}
	base := newSiblings(t, shape, "kernel_size: 3 pad: 1", 4).convs[0].(layer.SiblingFolder[float32])
	for _, c := range []struct {
		window string
		act    layer.ActivationKind
		want   bool
	}{
		{"kernel_size: 3 pad: 1", layer.ActReLU, true},
		{"kernel_size: 3 pad: 0", layer.ActReLU, false},
		{"kernel_size: 3 pad: 1 stride: 2", layer.ActReLU, false},
		{"kernel_size: 1", layer.ActReLU, false},
		{"kernel_size: 5 pad: 1", layer.ActReLU, false},
		{"kernel_size: 3 pad: 1 dilation: 2", layer.ActReLU, false},
		{"kernel_size: 3 pad: 1 group: 2", layer.ActReLU, false},
		{"kernel_size: 3 pad: 1", layer.ActNone, false},
	} {
		o := newSiblings(t, shape, c.window, 6).convs[0]
		if c.act != layer.ActReLU {
			f := convFold(6, true)
			f.Act = layer.Activation{Kind: c.act}
			if err := o.(layer.Folder[float32]).SetFold(f); err != nil {
				t.Fatal(err)
			}
		}
		if got := base.Sibling(o); got != c.want {
			t.Errorf("%s, activation %v: Sibling %v, want %v", c.window, c.act, got, c.want)
		}
		if err := base.SetSiblings([]layer.Layer[float32]{o}); (err == nil) != c.want {
			t.Errorf("%s, activation %v: SetSiblings error %v", c.window, c.act, err)
		}
		if err := base.SetSiblings(nil); err != nil {
			t.Fatal(err)
		}
	}
	other := newSiblings(t, []int{1, 5, 9, 9}, "kernel_size: 3 pad: 1", 6).convs[0]
	if base.Sibling(other) {
		t.Error("a convolution of another input's channels is a sibling")
	}
}

// BenchmarkConvSiblings times SSD's heads at batch 1, each alone and
// stacked by their lead:
//
//	GOMAXPROCS=2 go test ./layer/vision/ -run X -bench ConvSiblings
func BenchmarkConvSiblings(b *testing.B) {
	for _, c := range []struct {
		name   string
		shape  []int
		window string
		outs   []int
	}{
		{"ssd_conv11_heads", []int{1, 512, 19, 19}, "kernel_size: 3 pad: 1", []int{16, 84}},
		{"ssd_conv13_heads", []int{1, 1024, 10, 10}, "kernel_size: 3 pad: 1", []int{24, 126}},
		{"ssd_conv14_heads", []int{1, 512, 5, 5}, "kernel_size: 3 pad: 1", []int{24, 126}},
	} {
		for _, stacked := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/stacked=%v", c.name, stacked), func(b *testing.B) {
				s := newSiblings(b, c.shape, c.window, c.outs...)
				s.lead(b, stacked)
				s.forward(b, 0)
				for b.Loop() {
					s.forward(b, 0)
				}
			})
		}
	}
}
