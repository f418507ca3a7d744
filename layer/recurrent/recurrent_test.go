package recurrent_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
)

const (
	lstmParam = `type: "LSTM" recurrent_param { num_output: 7 weight_filler { type: "gaussian" std: 0.2 } bias_filler { type: "gaussian" std: 0.1 } } phase: TEST`
	rnnParam  = `type: "RNN" recurrent_param { num_output: 7 weight_filler { type: "gaussian" std: 0.2 } bias_filler { type: "gaussian" std: 0.1 } } phase: TEST`
)

// recurrentFill fills x (and x_static) from U(-1, 1) and cont as Caffe's
// NonZeroCont tests: 0 at the first step (no state from an earlier pass),
// 1 after, but 0 again for the last stream at step 2 (a new sequence).
func recurrentFill(i int, b *blob.Blob[float64]) {
	if i == 1 {
		n := b.Shape()[1]
		for j := range b.MutableCPUData() {
			b.MutableCPUData()[j] = float64(min(j/n, 1))
			if j == 3*n-1 {
				b.MutableCPUData()[j] = 0
			}
		}
		return
	}
	layertest.FillUniform(b, -1, 1, uint64(1701+i))
}

// unitFill fills LSTMUnit's c_prev and x from U(-1, 1) and cont with 0, 1.
func unitFill(i int, b *blob.Blob[float64]) {
	if i == 2 {
		for j := range b.MutableCPUData() {
			b.MutableCPUData()[j] = float64(j % 2)
		}
		return
	}
	layertest.FillUniform(b, -1, 1, uint64(1701+i))
}

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "LSTMUnit", Layer: `type: "LSTMUnit"`, Bottom: [][]int{{1, 3, 5}, {1, 3, 20}, {1, 3}}, Fill: unitFill,
			Mode: layertest.Exhaustive, CheckBottoms: []int{0, 1}},
		layertest.GradCase{Name: "LSTM/T1", Layer: lstmParam, Bottom: [][]int{{1, 3, 3, 2}, {1, 3}}, Fill: recurrentFill, Mode: layertest.Exhaustive, FirstBottomOnly: true},
		layertest.GradCase{Name: "LSTM/T3", Layer: lstmParam, Bottom: [][]int{{3, 2, 3, 2}, {3, 2}}, Fill: recurrentFill, Mode: layertest.Exhaustive, FirstBottomOnly: true},
		layertest.GradCase{Name: "LSTM/static", Layer: lstmParam, Bottom: [][]int{{2, 2, 3, 2}, {2, 2}, {2, 2, 3}}, Fill: recurrentFill,
			Mode: layertest.Exhaustive, CheckBottoms: []int{0, 2}},
		layertest.GradCase{Name: "RNN/T1", Layer: rnnParam, Bottom: [][]int{{1, 3, 3, 2}, {1, 3}}, Fill: recurrentFill, Mode: layertest.Exhaustive, FirstBottomOnly: true},
		layertest.GradCase{Name: "RNN/T3", Layer: rnnParam, Bottom: [][]int{{3, 2, 3, 2}, {3, 2}}, Fill: recurrentFill, Mode: layertest.Exhaustive, FirstBottomOnly: true},
		layertest.GradCase{Name: "RNN/static", Layer: rnnParam, Bottom: [][]int{{2, 2, 3, 2}, {2, 2}, {2, 2, 3}}, Fill: recurrentFill,
			Mode: layertest.Exhaustive, CheckBottoms: []int{0, 2}},
	)
	contFill := func(i int, b []float64) {
		for j := range b {
			if i == 1 {
				b[j] = float64(min(j/3, 1))
			} else {
				b[j] = math.Sin(float64(3*j + i))
			}
		}
	}
	cases.AddParity(
		layertest.Parity{Layer: `type: "LSTMUnit"`, Bottom: [][]int{{1, 4, 5}, {1, 4, 20}, {1, 4}}, Fill: func(i int, b []float64) {
			for j := range b {
				b[j] = math.Sin(float64(5*j+i)) * float64(1+i%2)
				if i == 2 {
					b[j] = float64(j % 2)
				}
			}
		}, NoPropagate: []int{2}},
		layertest.Parity{Layer: lstmParam, Bottom: [][]int{{4, 3, 5}, {4, 3}}, Fill: contFill, NoPropagate: []int{1}},
		layertest.Parity{Layer: rnnParam, Bottom: [][]int{{4, 3, 5}, {4, 3}}, Fill: contFill, NoPropagate: []int{1}},
	)
}

// Caffe's LSTMLayerTest.TestSetUp (and RNN's): the output is T x N x
// num_output; the learnable blobs have Caffe's shapes.
func TestRecurrentSetUp(t *testing.T) {
	x, cont, static := layertest.Blob[float64](t, 4, 3, 2, 5), layertest.Blob[float64](t, 4, 3), layertest.Blob[float64](t, 3, 6)
	for _, c := range []struct {
		param  string
		bottom []*blob.Blob[float64]
		shapes [][]int
	}{
		{lstmParam, []*blob.Blob[float64]{x, cont}, [][]int{{28, 10}, {28}, {28, 7}}},
		{lstmParam, []*blob.Blob[float64]{x, cont, static}, [][]int{{28, 10}, {28}, {28, 6}, {28, 7}}},
		{rnnParam, []*blob.Blob[float64]{x, cont}, [][]int{{7, 10}, {7}, {7, 7}, {7, 7}, {7}}},
		{rnnParam, []*blob.Blob[float64]{x, cont, static}, [][]int{{7, 10}, {7}, {7, 6}, {7, 7}, {7, 7}, {7}}},
	} {
		l := layertest.New[float64](t, c.param)
		y := layertest.Blob[float64](t)
		layertest.SetUp(t, l, c.bottom, []*blob.Blob[float64]{y})
		if !slices.Equal(y.Shape(), []int{4, 3, 7}) {
			t.Errorf("%s: top %v", l.Type(), y.Shape())
		}
		var got [][]int
		for _, b := range l.LayerBase().Blobs() {
			got = append(got, b.Shape())
		}
		if !slices.EqualFunc(got, c.shapes, slices.Equal) {
			t.Errorf("%s with %d bottoms: blobs %v, want %v", l.Type(), len(c.bottom), got, c.shapes)
		}
	}
}

// Caffe's LSTMLayerTest.TestForward: a sequence in one pass equals the
// same sequence fed one step at a time (the state carried between passes),
// and with expose_hidden the states pass through the extra bottoms and
// tops.
func TestRecurrentStepwise(t *testing.T) {
	for _, param := range []string{lstmParam, rnnParam} {
		const steps, n = 5, 3
		x, cont := layertest.Blob[float64](t, steps, n, 4), layertest.Blob[float64](t, steps, n)
		layertest.FillGaussian(x, 0, 1, 1)
		for i := range cont.MutableCPUData() {
			cont.MutableCPUData()[i] = float64(min(i/n, 1))
		}
		cont.MutableCPUData()[3*n+1] = 0
		whole := layertest.New[float64](t, param)
		y := layertest.Blob[float64](t)
		layertest.SetUp(t, whole, []*blob.Blob[float64]{x, cont}, []*blob.Blob[float64]{y})
		layertest.Forward(t, whole, []*blob.Blob[float64]{x, cont}, []*blob.Blob[float64]{y})

		stepped := layertest.New[float64](t, param)
		exposed := layertest.New[float64](t, strings.Replace(param, "recurrent_param { ", "recurrent_param { expose_hidden: true ", 1))
		xs, cs, ys := layertest.Blob[float64](t, 1, n, 4), layertest.Blob[float64](t, 1, n), layertest.Blob[float64](t)
		layertest.SetUp(t, stepped, []*blob.Blob[float64]{xs, cs}, []*blob.Blob[float64]{ys})
		stepped.LayerBase().SetBlobs(whole.LayerBase().Blobs())
		states := 1
		if whole.Type() == "LSTM" {
			states = 2
		}
		hin, hout := layertest.Blobs[float64](t, states), layertest.Blobs[float64](t, states)
		for _, b := range hin {
			b.Reshape([]int{1, n, 7})
		}
		ye := layertest.Blob[float64](t)
		layertest.SetUp(t, exposed, append([]*blob.Blob[float64]{xs, cs}, hin...), append([]*blob.Blob[float64]{ye}, hout...))
		exposed.LayerBase().SetBlobs(whole.LayerBase().Blobs())
		for s := range steps {
			copy(xs.MutableCPUData(), x.CPUData()[s*n*4:(s+1)*n*4])
			copy(cs.MutableCPUData(), cont.CPUData()[s*n:(s+1)*n])
			layertest.Forward(t, stepped, []*blob.Blob[float64]{xs, cs}, []*blob.Blob[float64]{ys})
			layertest.Forward(t, exposed, append([]*blob.Blob[float64]{xs, cs}, hin...), append([]*blob.Blob[float64]{ye}, hout...))
			want := y.CPUData()[s*n*7 : (s+1)*n*7]
			layertest.CheckClose(t, whole.Type()+" step", ys.CPUData(), want, 1e-12)
			layertest.CheckClose(t, whole.Type()+" exposed step", ye.CPUData(), want, 1e-12)
			for i := range hin {
				copy(hin[i].MutableCPUData(), hout[i].CPUData())
			}
		}
	}
}

// An LSTM learns to echo its input two steps late: trained by the solver
// on random bit sequences, it reproduces fresh ones with low loss.
func TestLSTMLearnsDelayedEcho(t *testing.T) {
	const steps, streams, delay = 10, 16, 2
	text := `
net_param {
  name: "Echo"
  layer { name: "in" type: "Input" top: "x" top: "cont" top: "target"
    input_param { shape { dim: 10 dim: 16 dim: 1 } shape { dim: 10 dim: 16 } shape { dim: 10 dim: 16 dim: 1 } } }
  layer { name: "lstm" type: "LSTM" bottom: "x" bottom: "cont" top: "h"
    recurrent_param { num_output: 12 weight_filler { type: "uniform" min: -0.1 max: 0.1 } bias_filler { type: "constant" value: 0 } } }
  layer { name: "out" type: "InnerProduct" bottom: "h" top: "y"
    inner_product_param { num_output: 1 axis: 2 weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "y" bottom: "target" top: "loss" }
}
type: "Adam" base_lr: 0.02 momentum: 0.9 momentum2: 0.999 lr_policy: "fixed" display: 0
random_seed: 1701 snapshot_after_train: false`
	p := &caffepb.SolverParameter{}
	if err := protoio.ParseText([]byte(text), p); err != nil {
		t.Fatal(err)
	}
	s, err := solver.New[float32](p, solver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := s.Net()
	rng := mathfn.NewRNG(7)
	fill := func() {
		x, cont, target := n.BlobByName("x").MutableCPUData(), n.BlobByName("cont").MutableCPUData(), n.BlobByName("target").MutableCPUData()
		for i := range x {
			x[i] = float32(rng.IntN(2)*2 - 1)
		}
		for step := range steps {
			for st := range streams {
				i := step*streams + st
				cont[i] = float32(min(step, 1))
				target[i] = 0
				if step >= delay {
					target[i] = x[i-delay*streams]
				}
			}
		}
	}
	fill()
	first, err := n.Forward()
	if err != nil {
		t.Fatal(err)
	}
	for range 400 {
		fill()
		if err := s.Step(1); err != nil {
			t.Fatal(err)
		}
	}
	var loss float32
	for range 5 {
		fill()
		l, err := n.Forward()
		if err != nil {
			t.Fatal(err)
		}
		loss += l / 5
	}
	t.Logf("echo loss %v after training, %v at first", loss, first)
	if loss > 0.02 {
		t.Errorf("echo loss %v after training (at first %v), want below 0.02", loss, first)
	}
}
