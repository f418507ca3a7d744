package net_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// foldModels are the deploy nets of models/, each folded and unfolded in
// TestFoldDeployNets.
var foldModels = []string{
	"lenet/lenet_deploy.prototxt",
	"cifar10_quick/cifar10_quick.prototxt",
	"caffenet/deploy.prototxt",
	"googlenet/deploy.prototxt",
	"resnet50/deploy.prototxt",
	"mobilenet/deploy.prototxt",
	"forks/mobilenet_ssd_deploy.prototxt",
	"forks/ssd300_vgg16_deploy.prototxt",
	"forks/faster_rcnn_vgg16_test.prototxt",
}

// deployPair builds a model's TEST net twice, folded and not, with the
// same weights (the fillers' under one seed), BatchNorm statistics and
// Scale parameters away from the identity, and one input.
//
// Both keep every blob's memory of its own (NoMemoryReuse): the comparison
// reads every blob, which the liveness pass would otherwise let share
// memory with others once its values are no longer needed.
func deployPair(t *testing.T, path string) (folded, plain *net.Net[float32]) {
	t.Helper()
	return deployNet(t, path, net.Options{NoMemoryReuse: true}), deployNet(t, path, net.Options{NoMemoryReuse: true, NoFold: true})
}

// deployNet builds a model's TEST net with opts, the same weights,
// statistics and input as every other deployNet of the model.
func deployNet(t *testing.T, path string, opts net.Options) *net.Net[float32] {
	t.Helper()
	opts.State, opts.Seed = &caffepb.NetState{Phase: caffepb.Phase_TEST.Enum()}, 1701
	n, err := net.NewFromFile[float32](path, opts)
	if err != nil {
		if strings.Contains(err.Error(), "Python") {
			t.Skipf("%s: %v", path, err)
		}
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 9))
	for _, l := range n.Layers() {
		b := l.LayerBase().Blobs()
		switch l.Type() {
		case "BatchNorm":
			mean, variance := b[0].MutableCPUData(), b[1].MutableCPUData()
			for c := range mean {
				mean[c], variance[c] = float32(rng.Float64()-0.5), float32(0.5+1.5*rng.Float64())
			}
			b[2].MutableCPUData()[0] = 1
		case "Scale":
			for j, blob := range b {
				for c := range blob.MutableCPUData() {
					if j == 0 {
						blob.MutableCPUData()[c] = float32(0.5 + rng.Float64())
					} else {
						blob.MutableCPUData()[c] = float32(rng.Float64() - 0.5)
					}
				}
			}
		}
	}
	for j, l := range n.Layers() {
		if l.Type() != "Input" {
			continue
		}
		for _, top := range n.Tops(j) {
			x := top.MutableCPUData()
			for k := range x {
				x[k] = float32(2*rng.Float64() - 1)
			}
		}
	}
	return n
}

// compareBlobs checks every blob of the two nets after their forward
// passes within net.FoldTolerance of the unfolded one's largest
// magnitude, but for DetectionOutput's tops (non-maximum suppression cuts
// at thresholds: its inputs are compared).
func compareBlobs(t *testing.T, folded, plain *net.Net[float32]) {
	t.Helper()
	skip := map[string]bool{}
	for i, l := range plain.Layers() {
		if l.Type() == "DetectionOutput" {
			for _, name := range plainTopNames(plain, i) {
				skip[name] = true
			}
		}
	}
	names := plain.BlobNames()
	worst, worstName := 0.0, ""
	for i, b := range plain.Blobs() {
		if skip[names[i]] {
			continue
		}
		a, want := folded.Blobs()[i].CPUData(), b.CPUData()
		scale, diff := 0.0, 0.0
		for k := range want {
			scale = math.Max(scale, math.Abs(float64(want[k])))
			diff = math.Max(diff, math.Abs(float64(a[k])-float64(want[k])))
		}
		rel := diff / math.Max(scale, 1e-6)
		if rel > worst || math.IsNaN(rel) {
			worst, worstName = rel, names[i]
		}
		if !(rel <= net.FoldTolerance) {
			t.Errorf("blob %q: max |folded - unfolded| = %.3g, %.3g of its largest magnitude %.3g (tolerance %g)", names[i], diff, rel, scale, net.FoldTolerance)
		}
	}
	t.Logf("largest relative difference %.3g (blob %q)", worst, worstName)
}

func plainTopNames(n *net.Net[float32], i int) []string {
	var out []string
	for _, top := range n.Tops(i) {
		for j, b := range n.Blobs() {
			if b == top {
				out = append(out, n.BlobNames()[j])
			}
		}
	}
	return out
}

// Folded and unfolded deploy nets agree within FoldTolerance on every
// model of models/, the caller's weights are unchanged by folding, and the
// plan says what folded.
func TestFoldDeployNets(t *testing.T) {
	for _, m := range foldModels {
		t.Run(strings.TrimSuffix(m, ".prototxt"), func(t *testing.T) {
			path := filepath.Join("..", "models", m)
			if _, err := os.Stat(path); err != nil {
				t.Fatal(err)
			}
			folded, plain := deployPair(t, path)
			params := make([][]float32, 0)
			for _, p := range folded.Params() {
				params = append(params, slices.Clone(p.CPUData()))
			}
			if _, err := folded.Forward(); err != nil {
				t.Fatal(err)
			}
			if _, err := plain.Forward(); err != nil {
				t.Fatal(err)
			}
			compareBlobs(t, folded, plain)
			for i, p := range folded.Params() {
				if !slices.Equal(p.CPUData(), params[i]) {
					t.Errorf("parameter %d changed by a folded forward pass", i)
				}
			}
			fp, pp := folded.Plan(), plain.Plan()
			if s := pp.Pass("fold").Summary; !strings.HasPrefix(s, "none") {
				t.Errorf("unfolded net's fold pass: %s", s)
			}
			t.Logf("fold: %s", fp.Pass("fold").Summary)
			// With the liveness pass too (the default), the outputs are
			// the folded net's, bit for bit.
			reused := deployNet(t, path, net.Options{})
			if _, err := reused.Forward(); err != nil {
				t.Fatal(err)
			}
			for j, out := range reused.OutputBlobs() {
				if !slices.Equal(out.CPUData(), folded.OutputBlobs()[j].CPUData()) {
					t.Errorf("output %s with memory reuse differs from the folded net's without", reused.OutputBlobNames()[j])
				}
			}
		})
	}
}

// A partial pass that cuts a fold runs its layers as written: stepping
// through the net one layer at a time leaves each layer's own output,
// which the unfolded net's same steps give.
func TestFoldPartialPasses(t *testing.T) {
	folded, plain := deployPair(t, filepath.Join("..", "models", "mobilenet", "deploy.prototxt"))
	for i := range folded.Layers() {
		if _, err := folded.ForwardFromTo(i, i); err != nil {
			t.Fatal(err)
		}
		if _, err := plain.ForwardFromTo(i, i); err != nil {
			t.Fatal(err)
		}
		if i == 2 { // conv1 then its BatchNorm alone: exactly Caffe's numbers
			a, b := folded.BlobByName("conv1").CPUData(), plain.BlobByName("conv1").CPUData()
			if !slices.Equal(a, b) {
				t.Fatalf("after conv1/bn alone, conv1 differs between the nets")
			}
		}
	}
	compareBlobs(t, folded, plain)
	// A whole pass folds again, to the same numbers within tolerance.
	if _, err := folded.Forward(); err != nil {
		t.Fatal(err)
	}
	compareBlobs(t, folded, plain)
}

// Writing a folded layer's weights or a BatchNorm's statistics makes the
// next pass fold them again.
func TestFoldFollowsWrites(t *testing.T) {
	folded, plain := deployPair(t, filepath.Join("..", "models", "mobilenet", "deploy.prototxt"))
	if _, err := folded.Forward(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*net.Net[float32]{folded, plain} {
		w := n.LayerByName("conv1").LayerBase().Blobs()[0].MutableCPUData()
		for i := range w {
			w[i] *= -0.5
		}
		v := n.LayerByName("conv2_pw/bn").LayerBase().Blobs()[1].MutableCPUData()
		for i := range v {
			v[i] *= 3
		}
	}
	if _, err := folded.Forward(); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Forward(); err != nil {
		t.Fatal(err)
	}
	compareBlobs(t, folded, plain)
}

// A TRAIN net, and a TEST net whose layers run a backward pass
// (force_backward), fold nothing.
func TestFoldOnlyForInference(t *testing.T) {
	const text = `name: "f"
layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 dim: 6 dim: 6 } } }
layer { name: "conv" type: "Convolution" bottom: "x" top: "c" convolution_param { num_output: 4 kernel_size: 3 } }
layer { name: "bn" type: "BatchNorm" bottom: "c" top: "c" }
layer { name: "relu" type: "ReLU" bottom: "c" top: "c" }
`
	for _, tc := range []struct {
		text  string
		phase caffepb.Phase
		want  string
	}{
		{text, caffepb.Phase_TRAIN, "none"},
		{text + "force_backward: true\n", caffepb.Phase_TEST, "nothing"},
		{text, caffepb.Phase_TEST, "1 producers"},
	} {
		n := build(t, tc.text, tc.phase)
		p := n.Plan()
		if got := p.Pass("fold").Summary; !strings.HasPrefix(got, tc.want) {
			t.Errorf("%v: fold pass %q, want %q...", tc.phase, got, tc.want)
		}
	}
}

// A TEST net with a loss (a train_val's test net) folds when it is built
// for forward passes only, as the solver's test nets and `gocaffe test`
// build it, and its loss and accuracy stay within FoldTolerance of the
// unfolded net's; built to run backward, it does not fold.
func TestFoldTestNetWithLoss(t *testing.T) {
	const text = `name: "tv"
layer { name: "in" type: "Input" top: "x" top: "label"
  input_param { shape { dim: 8 dim: 3 dim: 8 dim: 8 } shape { dim: 8 } } }
layer { name: "conv" type: "Convolution" bottom: "x" top: "c"
  convolution_param { num_output: 6 kernel_size: 3 weight_filler { type: "gaussian" std: 0.3 } } }
layer { name: "bn" type: "BatchNorm" bottom: "c" top: "c" }
layer { name: "scale" type: "Scale" bottom: "c" top: "c" scale_param { bias_term: true } }
layer { name: "relu" type: "ReLU" bottom: "c" top: "c" }
layer { name: "ip" type: "InnerProduct" bottom: "c" top: "z"
  inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "z" bottom: "label" top: "loss" }
layer { name: "acc" type: "Accuracy" bottom: "z" bottom: "label" top: "acc" }
`
	dir := t.TempDir()
	path := filepath.Join(dir, "tv.prototxt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	label := func(n *net.Net[float32]) {
		l := n.BlobByName("label").MutableCPUData()
		for i := range l {
			l[i] = float32(i % 5)
		}
	}
	folded := deployNet(t, path, net.Options{NoMemoryReuse: true, ForwardOnly: true})
	plain := deployNet(t, path, net.Options{NoMemoryReuse: true, ForwardOnly: true, NoFold: true})
	backward := deployNet(t, path, net.Options{NoMemoryReuse: true})
	if got := folded.Plan().Pass("fold").Summary; !strings.HasPrefix(got, "2 producers fold the layers after them (Convolution+BatchNorm+Scale+ReLU 1, InnerProduct 1)") {
		t.Errorf("forward only: fold pass %q", got)
	}
	if got := backward.Plan().Pass("fold").Summary; !strings.HasPrefix(got, "0 producers") {
		t.Errorf("able to run backward: fold pass %q, want no producer folded", got)
	}
	label(folded)
	label(plain)
	lf, err := folded.Forward()
	if err != nil {
		t.Fatal(err)
	}
	lp, err := plain.Forward()
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(float64(lf - lp)); !(d <= net.FoldTolerance*math.Abs(float64(lp))) {
		t.Errorf("loss %v folded, %v unfolded", lf, lp)
	}
	compareBlobs(t, folded, plain)
}
