package normalization

import (
	"fmt"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	_ "github.com/gocaffe/gocaffe/layer/neuron" // the ReLU of the chains
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// bnChain is how TestBatchNormFusedHostMatchesUnfused builds a chain:
// BatchNorm (in place or not), then in place on its top a Scale (with a
// bias or not, or none) and a ReLU (or none).
type bnChain struct {
	shape                    []int
	global, inPlace          bool
	scale, bias, relu        bool
	fuse, splitBackward      bool // splitBackward: the backward pass suspends the fusion
	frozenScale, noPropagate bool // the Scale's vector not learnt; no dx wanted
}

func (c bnChain) String() string {
	return fmt.Sprintf("%v global %v in place %v scale %v bias %v relu %v frozen %v no dx %v",
		c.shape, c.global, c.inPlace, c.scale, c.bias, c.relu, c.frozenScale, c.noPropagate)
}

// The host's fused BatchNorm -> Scale -> ReLU passes (bnFuseHost) leave
// every blob's data and diff, the statistics, the running averages and the
// Scale's gradients as the three layers' own passes do, within rounding
// (the rows' sums are taken in vector lanes): with
// batch and global statistics, the BatchNorm in place and not, with and
// without the Scale, its bias and the ReLU, on shapes spread over the
// cores and not (N x C included), and when a partial backward pass has the
// layers compute their own backward passes after a fused forward pass.
func TestBatchNormFusedHostMatchesUnfused(t *testing.T) {
	var chains []bnChain
	for _, shape := range [][]int{{3, 7, 41, 53}, {2, 3, 5, 4}, {8, 16, 7, 7}, {40, 6}} {
		for _, global := range []bool{false, true} {
			for _, inPlace := range []bool{false, true} {
				for _, kind := range []struct{ scale, bias, relu bool }{{true, true, true}, {true, false, true}, {true, true, false}, {false, false, true}} {
					chains = append(chains, bnChain{shape: shape, global: global, inPlace: inPlace, scale: kind.scale, bias: kind.bias, relu: kind.relu})
				}
			}
		}
	}
	chains = append(chains,
		bnChain{shape: []int{3, 7, 41, 53}, inPlace: true, scale: true, bias: true, relu: true, frozenScale: true},
		bnChain{shape: []int{2, 3, 5, 4}, scale: true, bias: true, relu: true, noPropagate: true})
	for _, c := range chains {
		want := runBNChain(t, c)
		for _, split := range []bool{false, true} {
			f := c
			f.fuse, f.splitBackward = true, split
			got := runBNChain(t, f)
			for i := range want {
				// Within rounding of the array's largest magnitude:
				// the fused rows' sums are taken in another order.
				var top float64
				for _, w := range want[i] {
					if w == w {
						top = math.Max(top, math.Abs(float64(w)))
					}
				}
				for j, v := range got[i] {
					w := want[i][j]
					if (v != v) != (w != w) || v == v && math.Abs(float64(v-w)) > 2e-5*top {
						t.Fatalf("%v split %v: array %d [%d] = %v, unfused %v", c, split, i, j, v, w)
					}
				}
			}
		}
	}
}

// runBNChain runs two forward passes and a backward pass of a chain and
// returns what they leave: the blobs' data and diffs, the BatchNorm's
// statistics and the Scale's gradients.
func runBNChain(t *testing.T, c bnChain) [][]float32 {
	t.Helper()
	newLayer := func(text string) layer.Layer[float32] {
		p := &caffepb.LayerParameter{}
		if err := prototext.Unmarshal([]byte(text), p); err != nil {
			t.Fatal(err)
		}
		l, err := layer.New[float32](p)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	x, err := blob.New[float32](c.shape...)
	if err != nil {
		t.Fatal(err)
	}
	mathfn.RngGaussian(x.Count(), 0.5, 2, x.MutableCPUData(), mathfn.NewRNG(5))
	top := x
	if !c.inPlace {
		top, _ = blob.New[float32]()
	}
	bottoms, tops := []*blob.Blob[float32]{x}, []*blob.Blob[float32]{top}
	chain := []layer.Layer[float32]{newLayer(fmt.Sprintf(`name: "bn" type: "BatchNorm" batch_norm_param { use_global_stats: %v eps: 1e-4 }`, c.global))}
	if c.scale {
		lr := ""
		if c.frozenScale {
			lr = "param { lr_mult: 0 } "
		}
		chain = append(chain, newLayer(fmt.Sprintf(`name: "scale" type: "Scale" %sscale_param { bias_term: %v }`, lr, c.bias)))
	}
	if c.relu {
		chain = append(chain, newLayer(`name: "relu" type: "ReLU"`))
	}
	for i, l := range chain {
		b := tops
		if i == 0 {
			b = bottoms
		}
		if err := layer.SetUp(l, b, tops); err != nil {
			t.Fatal(err)
		}
	}
	for i, b := range chain[0].LayerBase().Blobs() { // running statistics as a trained net has them
		for j := range b.MutableCPUData() {
			b.MutableCPUData()[j] = float32(i+1) * (1 + float32(j%5)/4)
		}
	}
	if c.scale {
		for i, b := range chain[1].LayerBase().Blobs() {
			mathfn.RngGaussian(b.Count(), 0.2*float32(1-i), 1, b.MutableCPUData(), mathfn.NewRNG(uint64(7+i)))
			mathfn.RngGaussian(b.Count(), 0, 1, b.MutableCPUDiff(), mathfn.NewRNG(uint64(9+i)))
		}
	}
	if c.fuse {
		for i := 1; i < len(chain); i++ {
			if !layer.Fuse(chain[i-1], chain[i], tops, tops, tops, true) {
				t.Fatalf("%v: layer %d not fused", c, i)
			}
		}
	}
	for range 2 {
		for i, l := range chain {
			b := tops
			if i == 0 {
				b = bottoms
			}
			if _, err := layer.Forward(l, b, tops); err != nil {
				t.Fatal(err)
			}
		}
	}
	mathfn.RngGaussian(top.Count(), 0, 1, top.MutableCPUDiff(), mathfn.NewRNG(6))
	if c.splitBackward {
		for _, l := range chain {
			layer.SuspendFusion(l, true)
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		b := tops
		if i == 0 {
			b = bottoms
		}
		if err := layer.Backward(chain[i], tops, []bool{i > 0 || !c.noPropagate}, b); err != nil {
			t.Fatal(err)
		}
	}
	out := [][]float32{top.CPUData(), top.CPUDiff(), x.CPUData(), x.CPUDiff()}
	for _, l := range chain {
		for _, b := range l.LayerBase().Blobs() {
			out = append(out, b.CPUData(), b.CPUDiff())
		}
	}
	return out
}

// BenchmarkBatchNormChainHost times the forward and backward passes of a
// BatchNorm -> Scale -> ReLU chain in place with batch statistics, fused
// and as separate layers, at shapes of ResNet-50 at batch 8.
func BenchmarkBatchNormChainHost(b *testing.B) {
	for _, shape := range [][]int{{8, 64, 112, 112}, {8, 256, 56, 56}, {8, 512, 28, 28}, {8, 1024, 14, 14}, {8, 2048, 7, 7}} {
		for _, fuse := range []bool{false, true} {
			b.Run(fmt.Sprintf("%v/fused=%v", shape, fuse), func(b *testing.B) {
				text := []string{`name: "bn" type: "BatchNorm" batch_norm_param { use_global_stats: false }`,
					`name: "scale" type: "Scale" scale_param { bias_term: true }`, `name: "relu" type: "ReLU"`}
				x, _ := blob.New[float32](shape...)
				mathfn.RngGaussian(x.Count(), 0.5, 2, x.MutableCPUData(), mathfn.NewRNG(5))
				xs := []*blob.Blob[float32]{x}
				var chain []layer.Layer[float32]
				for _, s := range text {
					p := &caffepb.LayerParameter{}
					if err := prototext.Unmarshal([]byte(s), p); err != nil {
						b.Fatal(err)
					}
					l, err := layer.New[float32](p)
					if err != nil {
						b.Fatal(err)
					}
					if err := layer.SetUp(l, xs, xs); err != nil {
						b.Fatal(err)
					}
					if fuse && len(chain) > 0 && !layer.Fuse(chain[len(chain)-1], l, xs, xs, xs, true) {
						b.Fatal("not fused")
					}
					chain = append(chain, l)
				}
				mathfn.RngGaussian(x.Count(), 0, 1, x.MutableCPUDiff(), mathfn.NewRNG(6))
				b.Run("forward", func(b *testing.B) {
					for b.Loop() {
						for _, l := range chain {
							if _, err := layer.Forward(l, xs, xs); err != nil {
								b.Fatal(err)
							}
						}
					}
				})
				b.Run("backward", func(b *testing.B) {
					for b.Loop() {
						for i := len(chain) - 1; i >= 0; i-- {
							if err := layer.Backward(chain[i], xs, []bool{true}, xs); err != nil {
								b.Fatal(err)
							}
						}
					}
				})
			})
		}
	}
}
