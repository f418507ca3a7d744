package normalization

import (
	"fmt"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// The host backward pass over rows gives the generic pass's bottom, scale
// and bias gradients bit for bit: in place and not, with and without a
// bias, over one image and several, with rows long and short, and with the
// diffs accumulating over two passes (iter_size).
func TestScaleHostBackwardMatchesGeneric(t *testing.T) {
	for _, shape := range [][]int{{3, 7, 41, 53}, {2, 3, 5, 4}, {1, 16, 9, 9}, {8, 32, 7, 7}} {
		for _, inPlace := range []bool{false, true} {
			for _, bias := range []bool{false, true} {
				name := fmt.Sprintf("%v in place %v bias %v", shape, inPlace, bias)
				host := runScaleBackward(t, shape, inPlace, bias, false)
				generic := runScaleBackward(t, shape, inPlace, bias, true)
				for k := range host {
					for j, v := range host[k] {
						if math.Float32bits(v) != math.Float32bits(generic[k][j]) {
							t.Fatalf("%s: gradient %d [%d] = %v, the generic pass %v", name, k, j, v, generic[k][j])
						}
					}
				}
			}
		}
	}
}

// runScaleBackward runs a forward and two backward passes of a Scale with
// a learnable scale over shape's axis 1 and returns the bottom's, the
// scale's and the bias's gradients.
func runScaleBackward(t *testing.T, shape []int, inPlace, bias, generic bool) [][]float32 {
	t.Helper()
	p := &caffepb.LayerParameter{}
	text := fmt.Sprintf(`name: "sc" type: "Scale" scale_param { bias_term: %v filler { type: "gaussian" std: 1 } bias_filler { type: "gaussian" std: 1 } }`, bias)
	if err := prototext.Unmarshal([]byte(text), p); err != nil {
		t.Fatal(err)
	}
	l, err := layer.New[float32](p)
	if err != nil {
		t.Fatal(err)
	}
	sc := l.(*scaleLayer[float32])
	sc.genericBackward = generic
	x, err := blob.New[float32](shape...)
	if err != nil {
		t.Fatal(err)
	}
	mathfn.RngGaussian(x.Count(), 0.5, 2, x.MutableCPUData(), mathfn.NewRNG(5))
	top := x
	if !inPlace {
		top, _ = blob.New[float32]()
	}
	bottom, tops := []*blob.Blob[float32]{x}, []*blob.Blob[float32]{top}
	if err := layer.SetUp(l, bottom, tops); err != nil {
		t.Fatal(err)
	}
	for i, b := range sc.Blobs() { // the fillers' own seeds vary
		mathfn.RngGaussian(b.Count(), 1, 0.5, b.MutableCPUData(), mathfn.NewRNG(uint64(7+i)))
	}
	for pass := range 2 {
		if err := sc.ForwardCPU(bottom, tops); err != nil {
			t.Fatal(err)
		}
		mathfn.RngGaussian(top.Count(), 0, 1, top.MutableCPUDiff(), mathfn.NewRNG(uint64(6+pass)))
		if err := sc.BackwardCPU(tops, []bool{true}, bottom); err != nil {
			t.Fatal(err)
		}
	}
	out := [][]float32{append([]float32(nil), x.CPUDiff()...)}
	for _, b := range sc.Blobs() {
		out = append(out, append([]float32(nil), b.CPUDiff()...))
	}
	return out
}
