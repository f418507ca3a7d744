package net_test

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// TestFusedBatchNormScaleHost trains the BatchNorm-Scale-ReLU chain of
// fusedNet on the host, where the BatchNorm's passes compute the Scale's
// and the ReLU's, against the same net with debug_info (which fuses
// nothing) over two iterations: every blob's data and diff (with every
// blob its own memory) and every parameter's gradient (with the liveness
// plan's shared memory, which must keep what the fused backward pass
// reads) are the same within rounding (the fused rows' sums are taken in
// another order). In place and not, with global
// statistics, without the Scale, and with a leaky ReLU, which the host
// does not fuse.
func TestFusedBatchNormScaleHost(t *testing.T) {
	edit := func(text, old, new string) string { return editNet(t, text, old, new) }
	plain := fusedNet("conv")
	cases := []struct {
		name, text string
		fused      int // layers computed by the BatchNorm
	}{
		{"top_conv", plain, 2},
		{"top_bn", fusedNet("bn"), 2},
		{"global", edit(plain, `type: "BatchNorm" bottom: "conv" top: "conv" }`,
			`type: "BatchNorm" bottom: "conv" top: "conv" batch_norm_param { use_global_stats: true } }`), 2},
		{"no_scale", edit(plain, `layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
  scale_param { bias_term: true filler { type: "gaussian" mean: 1 std: 0.2 } bias_filler { type: "gaussian" std: 0.2 } } }`, ``), 1},
		{"leaky", edit(plain, `type: "ReLU" bottom: "conv" top: "conv" }`,
			`type: "ReLU" bottom: "conv" top: "conv" relu_param { negative_slope: 0.1 } }`), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ref := buildFusionNet(t, c.text, true, true)
			own := buildFusionNet(t, c.text, false, true)
			planned := buildFusionNet(t, c.text, false, false)
			computed := 0
			for _, l := range own.Plan().Layers {
				if l.ComputedBy != "" {
					computed++
				}
			}
			if got := ref.Plan().Pass("fusion").Summary; !strings.HasPrefix(got, "none") {
				t.Errorf("the debug_info net fuses: %q", got)
			}
			if computed != c.fused {
				t.Errorf("the plan has %d layers computed by another, want %d:\n%s", computed, c.fused, own.Plan())
			}
			nets := []*net.Net[float32]{ref, own, planned}
			for _, n := range nets {
				if bn := n.LayerByName("bn"); bn != nil { // running sums with a scale factor of 2
					b := bn.LayerBase().Blobs()
					for j := range b[0].Count() {
						b[0].MutableCPUData()[j] = float32(j) - 1
						b[1].MutableCPUData()[j] = 1 + float32(j)
					}
					b[2].MutableCPUData()[0] = 2
				}
				for _, name := range []string{"data", "target"} {
					layertest.FillGaussian(n.BlobByName(name), 0, 1, 7)
				}
			}
			for iter := range 2 {
				stepFusionNets(t, nets)
				for i, b := range ref.Blobs() {
					name := fmt.Sprintf("iteration %d, %s", iter, ref.BlobNames()[i])
					sameValues(t, name+" data", own.Blobs()[i].CPUData(), b.CPUData())
					sameValues(t, name+" diff", own.Blobs()[i].CPUDiff(), b.CPUDiff())
				}
				for i, b := range ref.Params() {
					name := fmt.Sprintf("iteration %d, param %s", iter, ref.ParamDisplayNames()[i])
					sameValues(t, name+" data (own memory)", own.Params()[i].CPUData(), b.CPUData())
					sameValues(t, name+" diff (own memory)", own.Params()[i].CPUDiff(), b.CPUDiff())
					sameValues(t, name+" diff (planned memory)", planned.Params()[i].CPUDiff(), b.CPUDiff())
				}
			}
		})
	}
}

// editNet returns text with old replaced by new once; old must be there.
func editNet(t *testing.T, text, old, new string) string {
	t.Helper()
	out := strings.Replace(text, old, new, 1)
	if out == text {
		t.Fatalf("no %q in the net", old)
	}
	return out
}

// buildFusionNet builds text for TestFusedBatchNormScaleHost, unfused
// (debug_info, its log discarded) or not, every blob with its own memory
// or the liveness plan's.
func buildFusionNet(t *testing.T, text string, unfused, ownMemory bool) *net.Net[float32] {
	t.Helper()
	p := &caffepb.NetParameter{}
	if err := protoio.ParseText([]byte(text), p); err != nil {
		t.Fatal(err)
	}
	if unfused {
		p.DebugInfo = proto.Bool(true)
	}
	n, err := net.New[float32](p, net.Options{Seed: 3, NoMemoryReuse: ownMemory, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// stepFusionNets runs a forward and backward pass of each net, then a
// plain SGD step, so that the next iteration starts from updated weights.
func stepFusionNets(t *testing.T, nets []*net.Net[float32]) {
	t.Helper()
	for _, n := range nets {
		if err := n.ClearParamDiffs(); err != nil {
			t.Fatal(err)
		}
		if _, err := n.ForwardBackward(); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range nets {
		for _, w := range n.LearnableParams() {
			d, x := w.CPUDiff(), w.MutableCPUData()
			for k := range x {
				x[k] -= 0.1 * d[k]
			}
		}
	}
}

// sameValues fails the test unless got holds want's values bit for bit.
func sameValues(t *testing.T, name string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	// Within rounding of the array's largest magnitude: the fused chain
	// sums a row in vector lanes, the unfused layers with a dot product.
	var top float64
	for _, w := range want {
		top = math.Max(top, math.Abs(float64(w)))
	}
	for i, v := range got {
		if math.Abs(float64(v-want[i])) > 1e-5*top || (v != v) != (want[i] != want[i]) {
			t.Fatalf("%s [%d] = %v, want %v", name, i, v, want[i])
		}
	}
}
