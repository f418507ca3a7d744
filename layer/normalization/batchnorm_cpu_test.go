package normalization

import (
	"fmt"
	"testing"

	"github.com/gocaffe/gocaffe/layer"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// The host's BatchNorm forward pass (bnHost) gives the generic pass's
// results bit for bit: the top, the kept xNorm, the statistics and the
// running averages (not temp, the forward pass's scratch, where the
// generic pass leaves std broadcast for its own backward pass), with batch statistics and global ones, in
// place and not, on shapes spread over the cores and not, N x C included.
func TestBatchNormHostMatchesGeneric(t *testing.T) {
	for _, shape := range [][]int{{3, 7, 41, 53}, {2, 3, 5, 4}, {4000, 6}} {
		for _, global := range []bool{false, true} {
			for _, inPlace := range []bool{false, true} {
				name := fmt.Sprintf("%v global %v in place %v", shape, global, inPlace)
				host := runBatchNorm(t, shape, global, inPlace, true)
				generic := runBatchNorm(t, shape, global, inPlace, false)
				for i := range host {
					for j, v := range host[i] {
						if v != generic[i][j] {
							t.Fatalf("%s: array %d [%d] = %v, the generic pass %v", name, i, j, v, generic[i][j])
						}
					}
				}
			}
		}
	}
}

// runBatchNorm runs one forward pass (on bnHost or the generic pass) after
// a first one that leaves running statistics, and returns the arrays the
// pass writes.
func runBatchNorm(t *testing.T, shape []int, global, inPlace, host bool) [][]float32 {
	t.Helper()
	p := &caffepb.LayerParameter{}
	if err := prototext.Unmarshal([]byte(fmt.Sprintf(`name: "bn" type: "BatchNorm" batch_norm_param { use_global_stats: %v eps: 1e-4 }`, global)), p); err != nil {
		t.Fatal(err)
	}
	l, err := layer.New[float32](p)
	if err != nil {
		t.Fatal(err)
	}
	bn := l.(*batchNormLayer[float32])
	x, err := blob.New[float32](shape...)
	if err != nil {
		t.Fatal(err)
	}
	mathfn.RngGaussian(x.Count(), 0.5, 2, x.MutableCPUData(), mathfn.NewRNG(5))
	top := x
	if !inPlace {
		top, _ = blob.New[float32]()
	}
	if err := layer.SetUp(l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{top}); err != nil {
		t.Fatal(err)
	}
	for i, b := range bn.Blobs() { // running statistics as a trained net has them
		for j := range b.MutableCPUData() {
			b.MutableCPUData()[j] = float32(i+1) * (1 + float32(j%5)/4)
		}
	}
	if host {
		err = bn.ForwardCPU([]*blob.Blob[float32]{x}, []*blob.Blob[float32]{top})
	} else {
		err = batchNormForward[float32](bn, device.HostView[float32]{}, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{top})
	}
	if err != nil {
		t.Fatal(err)
	}
	out := [][]float32{top.CPUData(), bn.xNorm.CPUData(), bn.mean.CPUData(), bn.variance.CPUData()}
	for _, b := range bn.Blobs() {
		out = append(out, b.CPUData())
	}
	return out
}

// The host's BatchNorm backward pass with batch statistics (bnBackHost)
// gives the generic pass's bottom gradient bit for bit, in place and not,
// on shapes spread over the cores and not, N x C included.
func TestBatchNormHostBackwardMatchesGeneric(t *testing.T) {
	for _, shape := range [][]int{{3, 7, 41, 53}, {2, 3, 5, 4}, {4000, 6}, {8, 16, 7, 7}} {
		for _, inPlace := range []bool{false, true} {
			name := fmt.Sprintf("%v in place %v", shape, inPlace)
			host := runBatchNormBackward(t, shape, inPlace, false)
			generic := runBatchNormBackward(t, shape, inPlace, true)
			for j, v := range host {
				if v != generic[j] {
					t.Fatalf("%s: bottom diff [%d] = %v, the generic pass %v", name, j, v, generic[j])
				}
			}
		}
	}
}

// runBatchNormBackward runs a forward and a backward pass with batch
// statistics and returns the bottom's gradient.
func runBatchNormBackward(t *testing.T, shape []int, inPlace, generic bool) []float32 {
	t.Helper()
	p := &caffepb.LayerParameter{}
	if err := prototext.Unmarshal([]byte(`name: "bn" type: "BatchNorm" batch_norm_param { use_global_stats: false eps: 1e-4 }`), p); err != nil {
		t.Fatal(err)
	}
	l, err := layer.New[float32](p)
	if err != nil {
		t.Fatal(err)
	}
	bn := l.(*batchNormLayer[float32])
	bn.genericBackward = generic
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
	if err := bn.ForwardCPU(bottom, tops); err != nil {
		t.Fatal(err)
	}
	mathfn.RngGaussian(top.Count(), 0, 1, top.MutableCPUDiff(), mathfn.NewRNG(6))
	if err := bn.BackwardCPU(tops, []bool{true}, bottom); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), x.CPUDiff()...)
}

// BenchmarkBatchNormHost times the host's BatchNorm forward and backward
// passes with batch statistics at MobileNet's conv2_pw/bn at batch 8
// (8 x 64 x 112 x 112) and ResNet-50's res2 (8 x 256 x 56 x 56).
func BenchmarkBatchNormHost(b *testing.B) {
	for _, shape := range [][]int{{8, 64, 112, 112}, {8, 256, 56, 56}} {
		b.Run(fmt.Sprint(shape), func(b *testing.B) {
			p := &caffepb.LayerParameter{}
			if err := prototext.Unmarshal([]byte(`name: "bn" type: "BatchNorm" batch_norm_param { use_global_stats: false }`), p); err != nil {
				b.Fatal(err)
			}
			l, err := layer.New[float32](p)
			if err != nil {
				b.Fatal(err)
			}
			x, _ := blob.New[float32](shape...)
			top, _ := blob.New[float32]()
			mathfn.RngGaussian(x.Count(), 0.5, 2, x.MutableCPUData(), mathfn.NewRNG(5))
			bottom, tops := []*blob.Blob[float32]{x}, []*blob.Blob[float32]{top}
			if err := layer.SetUp(l, bottom, tops); err != nil {
				b.Fatal(err)
			}
			mathfn.RngGaussian(top.Count(), 0, 1, top.MutableCPUDiff(), mathfn.NewRNG(6))
			b.Run("forward", func(b *testing.B) {
				for b.Loop() {
					if err := l.ForwardCPU(bottom, tops); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("backward", func(b *testing.B) {
				for b.Loop() {
					if err := l.BackwardCPU(tops, []bool{true}, bottom); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
