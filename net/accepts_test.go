package net_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// The nets in testdata/caffe_accepts are valid Caffe that gocaffe once
// refused: each builds in both phases and runs forward and backward.

// euclideanLossLayer is BVLC's examples/pycaffe/layers/pyloss.py
// EuclideanLossLayer written in Go: loss = sum((a-b)^2) / num / 2.
type euclideanLossLayer[T layer.Float] struct {
	layer.Base[T]
	diff []T
}

func newEuclideanLossLayer[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &euclideanLossLayer[T]{}
	return l, l.Init(p)
}

func (*euclideanLossLayer[T]) Type() string { return "Python" }
func (*euclideanLossLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(2), Top: layer.Exactly(1)}
}
func (*euclideanLossLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }
func (l *euclideanLossLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if bottom[0].Count() != bottom[1].Count() {
		return fmt.Errorf("inputs must have the same dimension")
	}
	l.diff = slices.Grow(l.diff[:0], bottom[0].Count())[:bottom[0].Count()]
	return top[0].Reshape(nil)
}
func (l *euclideanLossLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	a, b := bottom[0].CPUData(), bottom[1].CPUData()
	var sum T
	for i := range l.diff {
		l.diff[i] = a[i] - b[i]
		sum += l.diff[i] * l.diff[i]
	}
	top[0].MutableCPUData()[0] = sum / T(bottom[0].Shape()[0]) / 2
	return nil
}
func (l *euclideanLossLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	for i, sign := range []T{1, -1} {
		if !propagateDown[i] {
			continue
		}
		dx := bottom[i].MutableCPUDiff()
		for j, d := range l.diff {
			dx[j] = sign * d / T(bottom[i].Shape()[0]) * top[0].CPUDiff()[0]
		}
	}
	return nil
}

// toyData is a Python data layer written in Go: param_str is a Python dict
// {'batch_size': N, 'dim': D, 'classes': C}; it serves N inputs of D
// features whose label is the index of the largest of the first C.
type toyData[T layer.Float] struct {
	layer.Base[T]
	batch, dim, classes int
}

func newToyData[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	var cfg struct{ BatchSize, Dim, Classes int }
	js := strings.ReplaceAll(p.GetPythonParam().GetParamStr(), "'", `"`)
	js = strings.ReplaceAll(js, "batch_size", "BatchSize")
	if err := json.Unmarshal([]byte(js), &cfg); err != nil {
		return nil, fmt.Errorf("param_str %q: %w", p.GetPythonParam().GetParamStr(), err)
	}
	l := &toyData[T]{batch: cfg.BatchSize, dim: cfg.Dim, classes: cfg.Classes}
	return l, l.Init(p)
}

func (*toyData[T]) Type() string { return "Python" }
func (*toyData[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(0), Top: layer.Exactly(2)}
}
func (*toyData[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }
func (l *toyData[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := top[0].Reshape([]int{l.batch, l.dim}); err != nil {
		return err
	}
	return top[1].Reshape([]int{l.batch})
}
func (l *toyData[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := top[0].MutableCPUData(), top[1].MutableCPUData()
	for i := range l.batch {
		best := 0
		for j := range l.dim {
			x[i*l.dim+j] = T(l.RNG().NormFloat64())
			if j < l.classes && x[i*l.dim+j] > x[i*l.dim+best] {
				best = j
			}
		}
		y[i] = T(best)
	}
	return nil
}
func (*toyData[T]) BackwardCPU([]*blob.Blob[T], []bool, []*blob.Blob[T]) error { return nil }

func init() {
	if err := layer.RegisterPython("pyloss.EuclideanLossLayer", newEuclideanLossLayer[float32], newEuclideanLossLayer[float64]); err != nil {
		panic(err)
	}
	if err := layer.RegisterPython("toydata.ToyData", newToyData[float32], newToyData[float64]); err != nil {
		panic(err)
	}
}

// acceptedNets are the files of testdata/caffe_accepts, each with a check
// of what it is about.
var acceptedNets = map[string]func(t *testing.T, n *net.Net[float64]){
	"duplicate_layer_names.prototxt": func(t *testing.T, n *net.Net[float64]) {
		if n.LayerByName("loss").Type() != "EuclideanLoss" {
			t.Error(`LayerByName("loss") is not the later layer`)
		}
	},
	"loss_without_top.prototxt": func(t *testing.T, n *net.Net[float64]) {
		if slices.Contains(n.OutputBlobNames(), "(automatic)") {
			t.Error("the anonymous loss top is a net output")
		}
	},
	"python_loss.prototxt": func(t *testing.T, n *net.Net[float64]) {
		if n.LayerByName("ipx").LayerBase().Blobs()[0].AsumDiff() == 0 {
			t.Error("no gradient reached ipx through the Python loss")
		}
	},
	"contrastive_siamese.prototxt": func(t *testing.T, n *net.Net[float64]) {
		if n.LayerByName("conv1").LayerBase().Blobs()[0].Data() != n.LayerByName("conv1_p").LayerBase().Blobs()[0].Data() {
			t.Error("the towers do not share their weights")
		}
	},
	"hdf5_data.prototxt": func(t *testing.T, n *net.Net[float64]) {
		if got := n.BlobByName("data").Shape(); !slices.Equal(got, []int{4, 3, 4, 4}) {
			t.Errorf("data shape %v, want [4 3 4 4]", got)
		}
	},
	"window_data.prototxt": func(t *testing.T, n *net.Net[float64]) {
		if got := n.BlobByName("data").Shape(); !slices.Equal(got, []int{8, 3, 16, 16}) {
			t.Errorf("data shape %v, want [8 3 16 16]", got)
		}
		labels := n.BlobByName("label").CPUData()
		for i, v := range labels {
			if (i < 6) != (v == 0) {
				t.Errorf("labels %v: want 6 background (0) then 2 foreground", labels)
				break
			}
		}
	},
	"python_data.prototxt": func(t *testing.T, n *net.Net[float64]) {
		if got := n.BlobByName("data").Shape(); !slices.Equal(got, []int{4, 6}) {
			t.Errorf("data shape %v, want [4 6] from param_str", got)
		}
	},
}

func TestCaffeAcceptedNets(t *testing.T) {
	files, err := filepath.Glob("testdata/caffe_accepts/*.prototxt")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			check, ok := acceptedNets[filepath.Base(f)]
			if !ok {
				t.Fatalf("no check for %s", f)
			}
			for _, phase := range []caffepb.Phase{caffepb.Phase_TRAIN, caffepb.Phase_TEST} {
				n, err := net.NewFromFile[float64](f, net.Options{State: &caffepb.NetState{Phase: phase.Enum()}, Seed: 1701})
				if err != nil {
					t.Fatal(err)
				}
				loss, err := n.ForwardBackward()
				if err != nil {
					t.Fatal(err)
				}
				if math.IsNaN(loss) || loss <= 0 {
					t.Errorf("%v: loss %v", phase, loss)
				}
				check(t, n)
				n.Close()
			}
		})
	}
}

// The Go pyloss layer computes what Caffe's EuclideanLoss does, so the
// linreg net's loss and gradients equal those of the same net with
// EuclideanLoss in its place.
func TestPythonLossMatchesEuclidean(t *testing.T) {
	text, err := os.ReadFile("testdata/caffe_accepts/python_loss.prototxt")
	if err != nil {
		t.Fatal(err)
	}
	py := build(t, string(text), caffepb.Phase_TRAIN)
	eu := build(t, strings.Replace(string(text), "type: 'Python'", "type: 'EuclideanLoss'", 1), caffepb.Phase_TRAIN)
	lp, err := py.ForwardBackward()
	if err != nil {
		t.Fatal(err)
	}
	le, err := eu.ForwardBackward()
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(lp-le) > 1e-12*le {
		t.Errorf("loss %v, EuclideanLoss %v", lp, le)
	}
	for i, d := range paramDiffs(py) {
		want := paramDiffs(eu)[i]
		for j := range d {
			if math.Abs(d[j]-want[j]) > 1e-12*math.Max(1, math.Abs(want[j])) {
				t.Fatalf("param %d diff[%d] = %v, EuclideanLoss %v", i, j, d[j], want[j])
			}
		}
	}
}
