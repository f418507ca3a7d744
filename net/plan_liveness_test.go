package net_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// chainNet is a deploy-style chain with a branch: a Split, in-place ReLUs,
// a Flatten aliasing its bottom, a Concat of two branches.
const chainNet = `name: "chain"
layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 dim: 8 dim: 8 } } }
layer { name: "c1" type: "Convolution" bottom: "x" top: "c1" convolution_param { num_output: 4 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" std: 0.3 } } }
layer { name: "r1" type: "ReLU" bottom: "c1" top: "c1" }
layer { name: "c2" type: "Convolution" bottom: "c1" top: "c2" convolution_param { num_output: 4 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" std: 0.3 } } }
layer { name: "r2" type: "ReLU" bottom: "c2" top: "c2" }
layer { name: "c3" type: "Convolution" bottom: "c2" top: "c3" convolution_param { num_output: 4 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" std: 0.3 } } }
layer { name: "c4a" type: "Convolution" bottom: "c3" top: "c4a" convolution_param { num_output: 4 kernel_size: 1 weight_filler { type: "gaussian" std: 0.3 } } }
layer { name: "c4b" type: "Convolution" bottom: "c3" top: "c4b" convolution_param { num_output: 4 kernel_size: 1 weight_filler { type: "gaussian" std: 0.3 } } }
layer { name: "cat" type: "Concat" bottom: "c4a" bottom: "c4b" top: "cat" }
layer { name: "c5" type: "Convolution" bottom: "cat" top: "c5" convolution_param { num_output: 4 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" std: 0.3 } } }
layer { name: "flat" type: "Flatten" bottom: "c5" top: "flat" }
layer { name: "ip" type: "InnerProduct" bottom: "flat" top: "ip" inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "prob" type: "Softmax" bottom: "ip" top: "prob" }
`

func buildWith(t *testing.T, text string, opts net.Options) *net.Net[float32] {
	t.Helper()
	opts.Seed = 1701
	n, err := net.New[float32](parseNet(t, text), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func forwardOnce(t *testing.T, n *net.Net[float32]) {
	t.Helper()
	x := n.BlobByName("x").MutableCPUData()
	for i := range x {
		x[i] = float32(i%13)*0.1 - 0.6
	}
	if _, err := n.Forward(); err != nil {
		t.Fatal(err)
	}
}

// A deploy net's activations share a few slots: its output and the blobs
// named in Keep keep Caffe's values, equal to those of a net without
// reuse, and the inputs keep theirs; the plan says so.
func TestInferenceLiveness(t *testing.T) {
	own := buildWith(t, chainNet, net.Options{NoMemoryReuse: true})
	reuse := buildWith(t, chainNet, net.Options{Keep: []string{"c2"}})
	forwardOnce(t, own)
	forwardOnce(t, reuse)
	forwardOnce(t, reuse) // a second pass over the same memory
	for _, name := range []string{"prob", "c2", "x"} {
		if !slices.Equal(own.BlobByName(name).CPUData(), reuse.BlobByName(name).CPUData()) {
			t.Errorf("blob %s differs with memory reuse", name)
		}
	}
	var liveness string
	for _, p := range reuse.Plan().Passes {
		if p.Name == "liveness" {
			liveness = p.Summary
		}
	}
	if !strings.HasPrefix(liveness, "forward only") || !strings.Contains(liveness, "in an arena of") {
		t.Errorf("liveness pass: %q, want forward only in an arena", liveness)
	}
	r := reuse.MemoryReport()
	arena, largest, sum := 0, 0, 0
	for _, m := range r.Memories {
		if strings.HasPrefix(m.What, "arena: ") {
			arena = m.Bytes
		}
	}
	for _, p := range r.Placed {
		largest, sum = max(largest, p.Bytes), sum+p.Bytes
		if p.What == "x data" || p.What == "c2 data" || p.What == "prob data" {
			t.Errorf("%s is in the arena", p.What)
		}
	}
	// A chain needs room for two or three blobs at once, not one each.
	if len(r.Placed) < 5 || arena > 3*largest || arena >= sum {
		t.Errorf("arena of %d bytes for %d memories of %d bytes, the largest %d", arena, len(r.Placed), sum, largest)
	}
	if a, b := r.Activations, own.MemoryReport().Activations; a >= b {
		t.Errorf("activations take %d bytes with reuse, %d without", a, b)
	}
	if !strings.Contains(r.Format(-1), "The arena (offset, bytes, steps live, memory):") {
		t.Errorf("the report lists no arena:\n%s", r.Format(-1))
	}
}

// A net built ForwardOnly refuses a backward pass; one with a loss and
// no such option plans for it and computes the gradients of a net
// without reuse.
func TestForwardOnlyRefusesBackward(t *testing.T) {
	n := buildWith(t, chainNet, net.Options{ForwardOnly: true})
	forwardOnce(t, n)
	if err := n.Backward(); err == nil || !strings.Contains(err.Error(), "forward passes only") {
		t.Errorf("Backward of a ForwardOnly net: %v", err)
	}
	withLoss := "force_backward: true\n" + chainNet + `layer { name: "tin" type: "Input" top: "t" input_param { shape { dim: 2 dim: 5 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "prob" bottom: "t" top: "loss" }`
	var grads [][]float32
	for _, noReuse := range []bool{true, false} {
		n := buildWith(t, withLoss, net.Options{NoMemoryReuse: noReuse, State: &caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum()}})
		forwardOnce(t, n)
		if err := n.Backward(); err != nil {
			t.Fatal(err)
		}
		var g []float32
		for _, p := range n.LearnableParams() {
			g = append(g, p.CPUDiff()...)
		}
		g = append(g, n.BlobByName("x").CPUDiff()...)
		grads = append(grads, g)
	}
	if !slices.Equal(grads[0], grads[1]) {
		t.Error("gradients differ with memory reuse")
	}
	if len(grads[0]) == 0 {
		t.Error("no gradients")
	}
}

// PriorBox's tops keep memory of their own (layer.TopKeeper), so that the
// boxes it writes once per shape stay there: with the memory plan's
// reuse, two passes give the boxes a net without reuse gives, and so does
// a pass at another image size.
func TestPriorBoxKeepsTops(t *testing.T) {
	path := filepath.Join("..", "models", "forks", "mobilenet_ssd_deploy.prototxt")
	reused, own := deployNet(t, path, net.Options{}), deployNet(t, path, net.Options{NoMemoryReuse: true})
	for pass := range 3 {
		if pass == 2 {
			for _, n := range []*net.Net[float32]{reused, own} {
				if err := n.BlobByName("data").Reshape([]int{1, 3, 240, 320}); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, n := range []*net.Net[float32]{reused, own} {
			if _, err := n.Forward(); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range []string{"conv11_mbox_priorbox", "conv17_2_mbox_priorbox"} {
			if !slices.Equal(reused.BlobByName(name).CPUData(), own.BlobByName(name).CPUData()) {
				t.Errorf("pass %d: %s with memory reuse differs from the net's without", pass, name)
			}
		}
		if !slices.Equal(reused.OutputBlobs()[0].CPUData(), own.OutputBlobs()[0].CPUData()) {
			t.Errorf("pass %d: detections with memory reuse differ from the net's without", pass)
		}
	}
}
