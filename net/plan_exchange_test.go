package net_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// squareInPlace is a layer of the kind cuDNN's BatchNorm is on the GPU
// (layer.TopDataExchanger), on the host: in place, y = x*x, computed into
// a blob of its own whose data memory it then exchanges with the top's,
// its backward pass reading x there.
type squareInPlace[T layer.Float] struct {
	layer.Base[T]
	own       *blob.Blob[T]
	top       *blob.Blob[T] // in place
	exchanged bool
}

func newSquareInPlace[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &squareInPlace[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	var err error
	l.own, err = l.NewBlob()
	return l, err
}

func (*squareInPlace[T]) Type() string { return "Python" }
func (*squareInPlace[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}
func (*squareInPlace[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

func (l *squareInPlace[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if bottom[0] != top[0] {
		return fmt.Errorf("layer %s: in place only", l.Name())
	}
	l.top = top[0]
	return l.own.ReshapeLike(bottom[0])
}

func (l *squareInPlace[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if l.exchanged { // not restored: x aside, y in place
		copy(l.own.MutableCPUData(), top[0].CPUData())
		y := top[0].MutableCPUData()
		for i, v := range y {
			y[i] = v * v
		}
		return nil
	}
	x, y := top[0].CPUData(), l.own.MutableCPUData()
	for i, v := range x {
		y[i] = v * v
	}
	l.exchanged = true
	return l.own.ExchangeData(top[0])
}

func (l *squareInPlace[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	x, d := l.own.CPUData(), top[0].MutableCPUDiff()
	for i := range d {
		d[i] *= 2 * x[i]
	}
	return nil
}

func (l *squareInPlace[T]) ExchangeBlob() *blob.Blob[T] { return l.own }

func (l *squareInPlace[T]) RestoreTopData() error {
	if !l.exchanged {
		return nil
	}
	l.exchanged = false
	return l.top.ExchangeData(l.own)
}

func init() {
	if err := layer.RegisterPython("exchange.Square", newSquareInPlace[float32], newSquareInPlace[float64]); err != nil {
		panic(err)
	}
}

// exchangeNet squares in place twice: sq1's output is read by ip2's
// backward pass, sq2's only by the sum's forward pass. p dies at the
// Concat making sq1's top, so that sq1's output may take p's memory: a
// Concat writing there would overwrite its own input.
const exchangeNet = `name: "exchange"
force_backward: true
layer { name: "in" type: "Input" top: "x" top: "label" input_param { shape { dim: 4 dim: 6 } shape { dim: 4 dim: 3 } } }
layer { name: "ipp" type: "InnerProduct" bottom: "x" top: "p" inner_product_param { num_output: 6 weight_filler { type: "gaussian" std: 0.4 } bias_filler { type: "constant" value: 0.1 } } }
layer { name: "ipq" type: "InnerProduct" bottom: "x" top: "q" inner_product_param { num_output: 6 weight_filler { type: "gaussian" std: 0.4 } } }
layer { name: "cat" type: "Concat" bottom: "p" bottom: "q" top: "a" }
layer { name: "sq1" type: "Python" bottom: "a" top: "a" python_param { module: "exchange" layer: "Square" } }
layer { name: "ip2" type: "InnerProduct" bottom: "a" top: "b" inner_product_param { num_output: 6 weight_filler { type: "gaussian" std: 0.4 } } }
layer { name: "sq2" type: "Python" bottom: "b" top: "b" python_param { module: "exchange" layer: "Square" } }
layer { name: "ip3" type: "InnerProduct" bottom: "x" top: "c" inner_product_param { num_output: 6 weight_filler { type: "gaussian" std: 0.4 } } }
layer { name: "sum" type: "Eltwise" bottom: "b" bottom: "c" top: "s" }
layer { name: "ip4" type: "InnerProduct" bottom: "s" top: "out" inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.4 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "out" bottom: "label" top: "loss" }
`

// trainExchange runs iterations of forward, backward and an update of
// -0.1 times the gradients (a second forward pass before the backward one
// in iteration 1), and returns the losses and the parameters.
func trainExchange(t *testing.T, n *net.Net[float32], iterations int) (losses []float32, params [][]float32) {
	t.Helper()
	for it := range iterations {
		x, label := n.BlobByName("x").MutableCPUData(), n.BlobByName("label").MutableCPUData()
		for i := range x {
			x[i] = float32((i*7+it*3)%11)*0.1 - 0.5
		}
		for i := range label {
			label[i] = float32((i+it)%5) * 0.2
		}
		if err := n.ClearParamDiffs(); err != nil {
			t.Fatal(err)
		}
		passes := 1 + it%2
		var loss float32
		for range passes {
			var err error
			if loss, err = n.Forward(); err != nil {
				t.Fatal(err)
			}
		}
		if err := n.Backward(); err != nil {
			t.Fatal(err)
		}
		losses = append(losses, loss)
		for _, p := range n.LearnableParams() {
			d, w := p.CPUDiff(), p.MutableCPUData()
			for i := range w {
				w[i] -= 0.1 * d[i]
			}
		}
	}
	for _, p := range n.LearnableParams() {
		params = append(params, slices.Clone(p.CPUData()))
	}
	return losses, params
}

// A layer exchanging its top's memory with its own (layer.TopDataExchanger)
// has both memories placed: the plan keeps neither apart, sq2's output
// shares a slot, and training gives the losses and weights of a net
// without reuse bit for bit, also where a second forward pass finds the
// memories still exchanged; a kept blob holds Caffe's value after the
// passes.
func TestExchangedTopsPlaced(t *testing.T) {
	own := buildWith(t, exchangeNet, net.Options{NoMemoryReuse: true})
	reuse := buildWith(t, exchangeNet, net.Options{})
	kept := buildWith(t, exchangeNet, net.Options{Keep: []string{"b"}})
	report := reuse.MemoryReport()
	for _, m := range report.Memories {
		if strings.Contains(m.What, "'s output data (") {
			t.Errorf("an exchanged output keeps memory of its own: %q", m.What)
		}
	}
	var placed []string
	for _, p := range report.Placed {
		placed = append(placed, p.What)
	}
	if !slices.Contains(placed, "sq1's output data") || !slices.Contains(placed, "sq2's output data") {
		t.Errorf("the exchanged outputs are not in the arena: %q", placed)
	}
	wantLoss, wantParams := trainExchange(t, own, 4)
	for _, n := range []*net.Net[float32]{reuse, kept} {
		losses, params := trainExchange(t, n, 4)
		if !slices.Equal(losses, wantLoss) {
			t.Errorf("losses %v with reuse, %v without", losses, wantLoss)
		}
		for i := range params {
			if !slices.Equal(params[i], wantParams[i]) {
				t.Errorf("parameter %d differs with reuse", i)
			}
		}
	}
	if got, want := kept.BlobByName("b").CPUData(), own.BlobByName("b").CPUData(); !slices.Equal(got, want) {
		t.Errorf("kept blob b holds %v after the passes, want %v", got, want)
	}
	if a, b := reuse.MemoryReport().Activations, own.MemoryReport().Activations; a >= b {
		t.Errorf("activations take %d bytes with reuse, %d without", a, b)
	}
}
