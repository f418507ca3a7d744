// Package models_test checks that every model shipped under models/ is a
// working Caffe model: it parses, builds in both phases and runs forward
// and backward.
package models_test

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // the nets' and solvers' logs
	os.Exit(m.Run())
}

// model is one directory of models/: its nets, the shape of one input item
// and the batch the test runs (small, so the CPU test is quick).
type model struct {
	dir, trainVal, deploy, solver string
	item                          []int
	batch                         int
}

var models = []model{
	{"lenet", "lenet_train_test.prototxt", "lenet_deploy.prototxt", "lenet_solver.prototxt", []int{1, 28, 28}, 4},
	{"cifar10_quick", "cifar10_quick_train_test.prototxt", "cifar10_quick.prototxt", "cifar10_quick_solver.prototxt", []int{3, 32, 32}, 2},
	{"caffenet", "train_val.prototxt", "deploy.prototxt", "solver.prototxt", []int{3, 227, 227}, 1},
	{"googlenet", "train_val.prototxt", "deploy.prototxt", "solver.prototxt", []int{3, 224, 224}, 1},
	{"resnet50", "train_val.prototxt", "deploy.prototxt", "solver.prototxt", []int{3, 224, 224}, 2},
	{"mobilenet", "train_val.prototxt", "deploy.prototxt", "solver.prototxt", []int{3, 224, 224}, 2},
}

func readNet(t testing.TB, path string) *caffepb.NetParameter {
	t.Helper()
	p := &caffepb.NetParameter{}
	if err := protoio.ReadProtoFromTextFile(path, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// withDummyData replaces the net's Data layers by DummyData layers with
// the same tops: random batch x item data, constant labels.
func withDummyData(tb testing.TB, p *caffepb.NetParameter, item []int, batch int) {
	replaceDataLayers(tb, p, item, batch, func(l *caffepb.LayerParameter, data, label *caffepb.BlobShape) {
		l.Type, l.DummyDataParam = ptr("DummyData"), &caffepb.DummyDataParameter{
			Shape:      []*caffepb.BlobShape{data, label},
			DataFiller: []*caffepb.FillerParameter{{Type: ptr("gaussian"), Std: ptr[float32](1)}, {Type: ptr("constant")}},
		}
	})
}

// replaceDataLayers rewrites each Data layer of the net through replace,
// given the shapes of its tops (batch x item, batch), after dropping its
// data and transformation parameters.
func replaceDataLayers(tb testing.TB, p *caffepb.NetParameter, item []int, batch int,
	replace func(l *caffepb.LayerParameter, data, label *caffepb.BlobShape)) {
	tb.Helper()
	replaced := 0
	for _, l := range p.Layer {
		if l.GetType() != "Data" {
			continue
		}
		shape := &caffepb.BlobShape{Dim: []int64{int64(batch)}}
		for _, d := range item {
			shape.Dim = append(shape.Dim, int64(d))
		}
		l.DataParam, l.TransformParam = nil, nil
		replace(l, shape, &caffepb.BlobShape{Dim: []int64{int64(batch)}})
		replaced++
	}
	if replaced == 0 {
		tb.Fatal("no Data layer to replace")
	}
}

func ptr[V any](v V) *V { return &v }

func state(phase caffepb.Phase) net.Options {
	return net.Options{State: &caffepb.NetState{Phase: phase.Enum()}, Seed: 1}
}

// TestTrainValNets builds every train_val net in TRAIN and TEST phase and
// runs a forward and backward pass: the loss is finite and positive, the
// parameters get finite gradients, and the TEST net reports accuracy.
func TestTrainValNets(t *testing.T) {
	for _, m := range models {
		for _, phase := range []caffepb.Phase{caffepb.Phase_TRAIN, caffepb.Phase_TEST} {
			t.Run(fmt.Sprintf("%s/%v", m.dir, phase), func(t *testing.T) {
				if testing.Short() && m.batch*m.item[1] > 200 {
					t.Skip("ImageNet models are slow on the CPU")
				}
				p := readNet(t, filepath.Join(m.dir, m.trainVal))
				withDummyData(t, p, m.item, m.batch)
				n, err := net.New[float32](p, state(phase))
				if err != nil {
					t.Fatal(err)
				}
				defer n.Close()
				if phase == caffepb.Phase_TEST {
					trainedStatistics(n)
				}
				loss, err := n.ForwardBackward()
				if err != nil {
					t.Fatal(err)
				}
				if !(loss > 0) || math.IsInf(float64(loss), 0) {
					t.Errorf("loss %v, want finite and positive", loss)
				}
				checkGradients(t, n)
				if phase == caffepb.Phase_TEST && n.BlobByName("accuracy") == nil {
					t.Error("the TEST net has no accuracy output")
				}
			})
		}
	}
}

// trainedStatistics gives every BatchNorm layer the statistics of a trained
// net (mean 0, variance 1, scale factor 1) for its TEST phase, where fresh
// ones (all 0) divide by sqrt(eps) at every layer and overflow a deep net.
func trainedStatistics(n *net.Net[float32]) {
	for _, l := range n.Layers() {
		if l.Type() != "BatchNorm" {
			continue
		}
		b := l.LayerBase().Blobs()
		for i := range b[1].MutableCPUData() {
			b[1].MutableCPUData()[i] = 1
		}
		b[2].MutableCPUData()[0] = 1
	}
}

func checkGradients(t *testing.T, n *net.Net[float32]) {
	t.Helper()
	for i, p := range n.LearnableParams() {
		if g := p.AsumDiff(); math.IsNaN(float64(g)) || math.IsInf(float64(g), 0) {
			t.Errorf("param %d (%s) has gradient norm %v", i, p.ShapeString(), g)
		}
	}
	if n.LearnableParams()[0].AsumDiff() == 0 {
		t.Error("the first layer's weights got no gradient")
	}
}

// TestDeployNets runs each deploy net forward at a small batch: every
// image's class probabilities sum to 1.
func TestDeployNets(t *testing.T) {
	for _, m := range models {
		t.Run(m.dir, func(t *testing.T) {
			if testing.Short() && m.batch*m.item[1] > 200 {
				t.Skip("ImageNet models are slow on the CPU")
			}
			p := readNet(t, filepath.Join(m.dir, m.deploy))
			for _, l := range p.Layer {
				if l.GetType() == "Input" {
					l.InputParam.Shape[0].Dim[0] = int64(m.batch)
				}
			}
			n, err := net.New[float32](p, state(caffepb.Phase_TEST))
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			trainedStatistics(n)
			fillGaussian(n.BlobByName("data").MutableCPUData())
			if _, err := n.Forward(); err != nil {
				t.Fatal(err)
			}
			prob := n.BlobByName("prob")
			classes := prob.Count() / m.batch
			for b := range m.batch {
				var sum float64
				for _, v := range prob.CPUData()[b*classes : (b+1)*classes] {
					sum += float64(v)
				}
				if !(math.Abs(sum-1) <= 1e-4) { // NaN fails too
					t.Errorf("image %d: probabilities sum to %v", b, sum)
				}
			}
		})
	}
}

func fillGaussian(v []float32) {
	for i := range v {
		v[i] = float32(math.Sin(float64(i) * 0.37))
	}
}

// TestSolvers parses each solver; its net file is named relative to the
// repository root, as Caffe's examples are run from there.
func TestSolvers(t *testing.T) {
	for _, m := range models {
		s := &caffepb.SolverParameter{}
		if err := protoio.ReadProtoFromTextFile(filepath.Join(m.dir, m.solver), s); err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join("models", m.dir, m.trainVal); s.GetNet() != want {
			t.Errorf("%s: net %q, want %q", m.solver, s.GetNet(), want)
		}
		if s.GetBaseLr() <= 0 || s.GetMaxIter() <= 0 || s.GetTestIter() == nil {
			t.Errorf("%s: base_lr %v, max_iter %v, test_iter %v", m.solver, s.GetBaseLr(), s.GetMaxIter(), s.GetTestIter())
		}
	}
}
