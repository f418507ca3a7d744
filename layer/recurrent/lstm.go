package recurrent

import (
	"github.com/gocaffe/gocaffe/layer"
	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "LSTM",
		New32: newLSTM[float32], New64: newLSTM[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newLSTMGPU[float32], newLSTMGPU[float64])},
		ONNXWhy: "gocaffe writes no ONNX form of the recurrent layers",
	})
}

// LSTM is a long short-term memory layer over time-major sequences (Caffe's
// LSTMLayer; see recurrent for the bottoms, tops and state handling). At
// step t, with h_{t-1}, c_{t-1} the previous states:
//
//	gates_t = W_xc x_t + b_c [+ W_xc_static x_static] + W_hc (cont_t h_{t-1})
//	c_t, h_t = LSTMUnit(c_{t-1}, gates_t, cont_t)
//
// and the output is h. Learnable blobs, as Caffe's: W_xc (4H x I), b_c
// (4H), W_xc_static (4H x S, with a static input), W_hc (4H x H).
type lstmLayer[T layer.Float] struct {
	recurrent[T]
	// Per pass: gate inputs (T x N x 4H), cell states and conted previous
	// hidden states (T x N x H), the static transform (N x 4H); backward
	// scratch.
	gateIn, cell, hc, xs                             *blob.Blob[T]
	dgates, dstatic, dhNext, dcNext, dhc, dh, dcPrev *blob.Blob[T]
}

func newLSTM[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &lstmLayer[T]{}
	if err := l.init(p, "LSTM", 2, 4); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "LSTM".
func (*lstmLayer[T]) Type() string { return "LSTM" }

// LayerSetUp creates (or checks) the learnable blobs.
func (l *lstmLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if err := l.setUpShapes(bottom); err != nil {
		return err
	}
	in := bottom[0].CountFrom(2)
	shapes := [][]int{{l.gates, in}, {l.gates}}
	names := []string{"W_xc", "b_c"}
	if l.static {
		shapes = append(shapes, []int{l.gates, bottom[2].CountFrom(1)})
		names = append(names, "W_xc_static")
	}
	shapes = append(shapes, []int{l.gates, l.hidden})
	names = append(names, "W_hc")
	if len(l.Blobs()) > 0 {
		return l.CheckParamShapes(names, shapes...)
	}
	for i, s := range shapes {
		if err := l.addParam(names[i] == "b_c", s...); err != nil {
			return err
		}
	}
	return nil
}

// Reshape sizes the tops and buffers.
func (l *lstmLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := l.reshape(bottom, top); err != nil {
		return err
	}
	tn, nh, g := l.steps*l.streams, l.streams*l.hidden, l.gates
	for _, b := range []struct {
		p **blob.Blob[T]
		n int
	}{{&l.gateIn, tn * g}, {&l.cell, tn * l.hidden}, {&l.hc, tn * l.hidden}, {&l.xs, l.streams * g},
		{&l.dgates, tn * g}, {&l.dstatic, l.streams * g}, {&l.dhNext, nh}, {&l.dcNext, nh}, {&l.dhc, nh}, {&l.dh, nh}, {&l.dcPrev, nh}} {
		if _, err := buffer(l, b.p, b.n); err != nil {
			return err
		}
	}
	return nil
}

func (l *lstmLayer[T]) hiddenWeights() *blob.Blob[T] { return l.Blobs()[len(l.Blobs())-1] }

// ForwardCPU runs the T steps on the host.
func (l *lstmLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return lstmForward[T](l, hostRecurrentOf[T](l.Context()), bottom, top)
}

// BackwardCPU runs back through time on the host.
func (l *lstmLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return lstmBackward[T](l, hostRecurrentOf[T](l.Context()), top, propagateDown, bottom)
}

func lstmForward[T layer.Float, A any](l *lstmLayer[T], d recurrentOps[T, A], bottom, top []*blob.Blob[T]) error {
	n, h, g := l.streams, l.hidden, l.gates
	gateIn, xs, cellBuf, hcBuf := d.MutableData(l.gateIn), d.MutableData(l.xs), d.MutableData(l.cell), d.MutableData(l.hc)
	inputTransform(&l.recurrent, d, bottom, gateIn, xs)
	loadInitial(&l.recurrent, d, bottom)
	cont, out := d.Data(bottom[1]), d.MutableData(top[0])
	hPrev, cPrev := d.Data(l.initial[0]), d.Data(l.initial[1])
	whc := d.Data(l.hiddenWeights())
	for t := range l.steps {
		gates := d.Offset(gateIn, t*n*g)
		if l.static {
			d.Axpy(n*g, 1, xs, gates)
		}
		hc, ct := d.Offset(hcBuf, t*n*h), d.Offset(cont, t*n)
		d.contScale(n*h, h, ct, hPrev, hc)
		d.Gemm(blas.NoTrans, blas.Trans, n, g, h, 1, hc, whc, 1, gates)
		c, ht := d.Offset(cellBuf, t*n*h), d.Offset(out, t*n*h)
		d.lstmUnitForward(n*h, h, cPrev, gates, ct, c, ht)
		hPrev, cPrev = ht, c
	}
	finishForward(&l.recurrent, d, top, hPrev, cPrev)
	if err := d.fail(); err != nil {
		return err
	}
	return d.Err()
}

func lstmBackward[T layer.Float, A any](l *lstmLayer[T], d recurrentOps[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if err := l.checkBackward(propagateDown); err != nil {
		return err
	}
	n, h, g := l.streams, l.hidden, l.gates
	dgates, dstatic := d.MutableData(l.dgates), d.MutableData(l.dstatic)
	dhNext, dcNext, dhc, dh, dcPrev := d.MutableData(l.dhNext), d.MutableData(l.dcNext), d.MutableData(l.dhc), d.MutableData(l.dh), d.MutableData(l.dcPrev)
	d.Set(n*h, 0, dhNext)
	d.Set(n*h, 0, dcNext)
	d.Set(n*g, 0, dstatic)
	cont, dout := d.Data(bottom[1]), d.Diff(top[0])
	gateIn, cellBuf, hcBuf := d.Data(l.gateIn), d.Data(l.cell), d.Data(l.hc)
	whc := l.hiddenWeights()
	for t := l.steps - 1; t >= 0; t-- {
		ct := d.Offset(cont, t*n)
		cPrev := d.Data(l.initial[1])
		if t > 0 {
			cPrev = d.Offset(cellBuf, (t-1)*n*h)
		}
		d.Copy(n*h, d.Offset(dout, t*n*h), dh)
		d.Axpy(n*h, 1, dhNext, dh)
		dg := d.Offset(dgates, t*n*g)
		d.lstmUnitBackward(n*h, h, cPrev, d.Offset(gateIn, t*n*g), ct, d.Offset(cellBuf, t*n*h), dcNext, dh, dcPrev, dg)
		dcNext, dcPrev = dcPrev, dcNext
		if l.ParamPropagateDown(len(l.Blobs()) - 1) {
			d.Gemm(blas.Trans, blas.NoTrans, g, h, n, 1, dg, d.Offset(hcBuf, t*n*h), 1, d.MutableDiff(whc))
		}
		d.Gemm(blas.NoTrans, blas.NoTrans, n, h, g, 1, dg, d.Data(whc), 0, dhc)
		d.contScale(n*h, h, ct, dhc, dhNext)
		if l.static {
			d.Axpy(n*g, 1, dg, dstatic)
		}
	}
	inputBackward(&l.recurrent, d, bottom, propagateDown, dgates, dstatic)
	if err := d.fail(); err != nil {
		return err
	}
	return d.Err()
}
