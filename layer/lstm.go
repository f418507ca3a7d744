package layer

import (
	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() { register("LSTM", newLSTM[float32], newLSTM[float64]) }

// LSTM is a long short-term memory layer over time-major sequences (Caffe's
// LSTMLayer; see recurrent for the bottoms, tops and state handling). At
// step t, with h_{t-1}, c_{t-1} the previous states:
//
//	gates_t = W_xc x_t + b_c [+ W_xc_static x_static] + W_hc (cont_t h_{t-1})
//	c_t, h_t = LSTMUnit(c_{t-1}, gates_t, cont_t)
//
// and the output is h. Learnable blobs, as Caffe's: W_xc (4H x I), b_c
// (4H), W_xc_static (4H x S, with a static input), W_hc (4H x H).
type LSTM[T Float] struct {
	recurrent[T]
	// Per pass: gate inputs (T x N x 4H), cell states and conted previous
	// hidden states (T x N x H), the static transform (N x 4H).
	gateIn, cell, hc, xs []T
	// Backward scratch.
	dgates, dstatic, dhNext, dcNext, dhc, dh, dcPrev []T
}

func newLSTM[T Float](p *caffepb.LayerParameter) (Layer[T], error) {
	l := &LSTM[T]{}
	if err := l.init(p, "LSTM", 2, 4); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "LSTM".
func (*LSTM[T]) Type() string { return "LSTM" }

// LayerSetUp creates (or checks) the learnable blobs.
func (l *LSTM[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
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
	if len(l.blobs) > 0 {
		return l.checkParamShapes(names, shapes...)
	}
	for i, s := range shapes {
		if err := l.addParam(names[i] == "b_c", s...); err != nil {
			return err
		}
	}
	return nil
}

// Reshape sizes the tops and buffers.
func (l *LSTM[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := l.reshape(bottom, top); err != nil {
		return err
	}
	tn := l.steps * l.streams
	l.gateIn = grow(l.gateIn, tn*l.gates)
	l.cell = grow(l.cell, tn*l.hidden)
	l.hc = grow(l.hc, tn*l.hidden)
	l.xs = grow(l.xs, l.streams*l.gates)
	return nil
}

func (l *LSTM[T]) hiddenWeights() *blob.Blob[T] { return l.blobs[len(l.blobs)-1] }

// ForwardCPU runs the T steps.
func (l *LSTM[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	n, h, g := l.streams, l.hidden, l.gates
	l.inputTransform(bottom[0].CPUData(), l.blobs[0], l.blobs[1], l.gateIn)
	if l.static {
		l.staticTransform(bottom[2].CPUData(), l.blobs[2], l.xs)
	}
	cont, out := bottom[1].CPUData(), top[0].MutableCPUData()
	start := l.loadInitial(bottom)
	hPrev, cPrev := start[0], start[1]
	whc := l.hiddenWeights().CPUData()
	for t := range l.steps {
		gates := l.gateIn[t*n*g : (t+1)*n*g]
		if l.static {
			mathfn.Axpy(n*g, 1, l.xs, gates)
		}
		hc := l.hc[t*n*h : (t+1)*n*h]
		ct := cont[t*n : (t+1)*n]
		l.contHidden(ct, hPrev, hc)
		mathfn.Gemm(blas.NoTrans, blas.Trans, n, g, h, 1, hc, whc, 1, gates)
		c, ht := l.cell[t*n*h:(t+1)*n*h], out[t*n*h:(t+1)*n*h]
		lstmUnitForward(cPrev, gates, ct, h, c, ht)
		hPrev, cPrev = ht, c
	}
	l.finishForward(top, hPrev, cPrev)
	return nil
}

// BackwardCPU runs back through time, then through the input transforms.
func (l *LSTM[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if err := l.checkBackward(propagateDown); err != nil {
		return err
	}
	n, h, g := l.streams, l.hidden, l.gates
	tn := l.steps * n
	l.dgates = grow(l.dgates, tn*g)
	l.dstatic = grow(l.dstatic, n*g)
	l.dhNext, l.dcNext = grow(l.dhNext, n*h), grow(l.dcNext, n*h)
	l.dhc, l.dh, l.dcPrev = grow(l.dhc, n*h), grow(l.dh, n*h), grow(l.dcPrev, n*h)
	clear(l.dhNext)
	clear(l.dcNext)
	clear(l.dstatic)
	cont, dout := bottom[1].CPUData(), top[0].CPUDiff()
	whc := l.hiddenWeights()
	for t := l.steps - 1; t >= 0; t-- {
		ct := cont[t*n : (t+1)*n]
		cPrev := l.initial[1]
		if t > 0 {
			cPrev = l.cell[(t-1)*n*h : t*n*h]
		}
		for i := range l.dh {
			l.dh[i] = dout[t*n*h+i] + l.dhNext[i]
		}
		dg := l.dgates[t*n*g : (t+1)*n*g]
		lstmUnitBackward(cPrev, l.gateIn[t*n*g:(t+1)*n*g], ct, h, l.cell[t*n*h:(t+1)*n*h], l.dcNext, l.dh, l.dcPrev, dg)
		l.dcNext, l.dcPrev = l.dcPrev, l.dcNext
		if l.ParamPropagateDown(len(l.blobs) - 1) {
			mathfn.Gemm(blas.Trans, blas.NoTrans, g, h, n, 1, dg, l.hc[t*n*h:(t+1)*n*h], 1, whc.MutableCPUDiff())
		}
		mathfn.Gemm(blas.NoTrans, blas.NoTrans, n, h, g, 1, dg, whc.CPUData(), 0, l.dhc)
		l.contHidden(ct, l.dhc, l.dhNext)
		if l.static {
			mathfn.Axpy(n*g, 1, dg, l.dstatic)
		}
	}
	var ws *blob.Blob[T]
	if l.static {
		ws = l.blobs[2]
	}
	l.inputBackward(bottom, propagateDown, l.dgates, l.dstatic, l.blobs[0], l.blobs[1], ws)
	return nil
}
