package layer

import (
	"errors"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// recurrent is what RNN and LSTM share (Caffe's RecurrentLayer). Inputs are
// time-major: bottom 0 is x, T x N x ... (T timesteps of N independent
// streams), bottom 1 the continuation markers cont, T x N (0 where a
// sequence starts: the state from the step before is dropped), then an
// optional static input x_static, N x ..., seen at every step, and with
// recurrent_param.expose_hidden the initial states (1 x N x num_output
// each). The first top is the output sequence, T x N x num_output; with
// expose_hidden the final states follow.
//
// Without expose_hidden the final states of one forward pass are the
// initial states of the next (zero at first), so that long sequences can
// be fed in pieces; cont = 0 resets them. As in Caffe, no gradient flows
// into the previous pass, nor (with expose_hidden) into the initial-state
// bottoms or out of the final-state tops.
//
// Caffe builds an unrolled net of InnerProduct, Scale, Eltwise and unit
// layers; here the same arithmetic is written directly, with the learnable
// blobs in the unrolled net's order and shapes, so that Caffe's models load.
type recurrent[T Float] struct {
	Base[T]
	typ    string
	hidden int // num_output
	nState int // recurrent states: 1 (h) for RNN, 2 (h, c) for LSTM
	gates  int // rows of the input transform: H for RNN, 4H for LSTM
	expose bool
	static bool
	steps  int // T
	// Set by reshape.
	streams, inDim, staticDim int
	state                     [][]T // the carried states, N x H each
	initial                   [][]T // the states this pass started from
	outShape, stateShape      []int
}

func (l *recurrent[T]) init(p *caffepb.LayerParameter, typ string, nState, gatesPerUnit int) error {
	if err := l.Init(p); err != nil {
		return err
	}
	rp := p.GetRecurrentParam()
	l.typ, l.nState = typ, nState
	l.hidden = int(rp.GetNumOutput())
	if l.hidden <= 0 {
		return errors.New("recurrent_param.num_output must be positive")
	}
	l.gates = gatesPerUnit * l.hidden
	l.expose = rp.GetExposeHidden()
	return nil
}

// Counts returns x and cont (then x_static, then the initial states with
// expose_hidden) in; the output (and the final states) out.
func (l *recurrent[T]) Counts() BlobCounts {
	minBottom := 2
	nTop := 1
	if l.expose {
		minBottom += l.nState
		nTop += l.nState
	}
	return BlobCounts{Bottom: Between(minBottom, minBottom+1), Top: Exactly(nTop)}
}

// AllowForceBackward refuses cont and the initial states.
func (l *recurrent[T]) AllowForceBackward(i int) bool {
	return i == 0 || (l.static && i == 2)
}

// setUpShapes reads T, N and the input sizes, and notes a static input.
func (l *recurrent[T]) setUpShapes(bottom []*blob.Blob[T]) error {
	if bottom[0].NumAxes() < 2 {
		return fmt.Errorf("bottom[0] must have at least 2 axes -- (#timesteps, #streams, ...), got %s", bottom[0].ShapeString())
	}
	l.steps = bottom[0].Shape()[0]
	nHidden := 0
	if l.expose {
		nHidden = l.nState
		glog.Warningf("%s layer %s: expose_hidden passes the states' values but, as in Caffe, no gradient through them", l.typ, l.Name())
	}
	l.static = len(bottom) > 2+nHidden
	return nil
}

// addParam appends a learnable blob filled by recurrent_param's weight or
// bias filler.
func (l *recurrent[T]) addParam(bias bool, shape ...int) error {
	rp := l.param.GetRecurrentParam()
	fp := rp.GetWeightFiller()
	if bias {
		fp = rp.GetBiasFiller()
	}
	b, err := l.NewParamBlob(fp, shape...)
	if err != nil {
		return err
	}
	l.blobs = append(l.blobs, b)
	return nil
}

// reshape checks the bottoms and sizes the tops and the carried states.
func (l *recurrent[T]) reshape(bottom, top []*blob.Blob[T]) error {
	x, cont := bottom[0], bottom[1]
	if x.NumAxes() < 2 || x.Shape()[0] != l.steps {
		return fmt.Errorf("input number of timesteps changed: %s, set up with %d", x.ShapeString(), l.steps)
	}
	n := x.Shape()[1]
	if cont.NumAxes() != 2 || cont.Shape()[0] != l.steps || cont.Shape()[1] != n {
		return fmt.Errorf("bottom[1] (cont) must be #timesteps x #streams = %d x %d, got %s", l.steps, n, cont.ShapeString())
	}
	if n != l.streams || l.state == nil {
		l.state, l.initial = make([][]T, l.nState), make([][]T, l.nState)
		for i := range l.state {
			l.state[i], l.initial[i] = make([]T, n*l.hidden), make([]T, n*l.hidden)
		}
	}
	l.streams, l.inDim = n, x.CountFrom(2)
	if l.static {
		s := bottom[2]
		if s.NumAxes() < 1 || s.Shape()[0] != n {
			return fmt.Errorf("the static input must be #streams x ... = %d x ..., got %s", n, s.ShapeString())
		}
		l.staticDim = s.CountFrom(1)
	}
	l.stateShape = append(l.stateShape[:0], 1, n, l.hidden)
	if l.expose {
		first := 2
		if l.static {
			first = 3
		}
		for i, b := range bottom[first:] {
			if !slices.Equal(b.Shape(), l.stateShape) {
				return fmt.Errorf("initial state bottom %d must be 1 x %d x %d, got %s", first+i, n, l.hidden, b.ShapeString())
			}
		}
	}
	l.outShape = append(l.outShape[:0], l.steps, n, l.hidden)
	if err := top[0].Reshape(l.outShape); err != nil {
		return err
	}
	for _, t := range top[1:] {
		if err := t.Reshape(l.stateShape); err != nil {
			return err
		}
	}
	return nil
}

// loadInitial sets the states at the first step: the exposed bottoms, or
// the states carried from the previous pass. It returns them.
func (l *recurrent[T]) loadInitial(bottom []*blob.Blob[T]) [][]T {
	for i, s := range l.initial {
		if l.expose {
			first := 2
			if l.static {
				first = 3
			}
			copy(s, bottom[first+i].CPUData())
		} else {
			copy(s, l.state[i])
		}
	}
	return l.initial
}

// finishForward keeps the final states for the next pass, or hands them to
// the exposed tops.
func (l *recurrent[T]) finishForward(top []*blob.Blob[T], final ...[]T) {
	for i, f := range final {
		if l.expose {
			copy(top[1+i].MutableCPUData(), f)
		} else {
			copy(l.state[i], f)
		}
	}
}

// Reset zeroes the carried states (Caffe's RecurrentLayer::Reset).
func (l *recurrent[T]) Reset() {
	for _, s := range l.state {
		clear(s)
	}
}

// inputTransform computes out (T*N x gates) = x (T*N x I) W^T + b.
func (l *recurrent[T]) inputTransform(x []T, w, b *blob.Blob[T], out []T) {
	rows := l.steps * l.streams
	mathfn.Gemm(blas.NoTrans, blas.Trans, rows, l.gates, l.inDim, 1, x, w.CPUData(), 0, out)
	bias := b.CPUData()
	for r := range rows {
		row := out[r*l.gates : (r+1)*l.gates]
		for j := range row {
			row[j] += bias[j]
		}
	}
}

// staticTransform computes out (N x gates) = x_static W_static^T.
func (l *recurrent[T]) staticTransform(xs []T, w *blob.Blob[T], out []T) {
	mathfn.Gemm(blas.NoTrans, blas.Trans, l.streams, l.gates, l.staticDim, 1, xs, w.CPUData(), 0, out)
}

// contHidden writes cont_t * hPrev (N x H) into hc.
func (l *recurrent[T]) contHidden(cont, hPrev, hc []T) {
	for n, c := range cont {
		for d := range l.hidden {
			hc[n*l.hidden+d] = c * hPrev[n*l.hidden+d]
		}
	}
}

// inputBackward accumulates the input transform's parameter gradients from
// dgates (T*N x gates) and, if propagate, writes x's gradient; likewise for
// the static input with dstatic (N x gates, summed over time).
func (l *recurrent[T]) inputBackward(bottom []*blob.Blob[T], propagateDown []bool, dgates, dstatic []T, w, b, ws *blob.Blob[T]) {
	rows := l.steps * l.streams
	x := bottom[0].CPUData()
	if l.ParamPropagateDown(0) {
		mathfn.Gemm(blas.Trans, blas.NoTrans, l.gates, l.inDim, rows, 1, dgates, x, 1, w.MutableCPUDiff())
	}
	if l.ParamPropagateDown(1) {
		db := b.MutableCPUDiff()
		for r := range rows {
			for j, g := range dgates[r*l.gates : (r+1)*l.gates] {
				db[j] += g
			}
		}
	}
	if propagateDown[0] {
		mathfn.Gemm(blas.NoTrans, blas.NoTrans, rows, l.inDim, l.gates, 1, dgates, w.CPUData(), 0, bottom[0].MutableCPUDiff())
	}
	if !l.static {
		return
	}
	xs := bottom[2].CPUData()
	if l.ParamPropagateDown(2) {
		mathfn.Gemm(blas.Trans, blas.NoTrans, l.gates, l.staticDim, l.streams, 1, dstatic, xs, 1, ws.MutableCPUDiff())
	}
	if propagateDown[2] {
		mathfn.Gemm(blas.NoTrans, blas.NoTrans, l.streams, l.staticDim, l.gates, 1, dstatic, ws.CPUData(), 0, bottom[2].MutableCPUDiff())
	}
}

// checkBackward refuses gradients to cont and the initial states.
func (l *recurrent[T]) checkBackward(propagateDown []bool) error {
	if propagateDown[1] {
		return errors.New("cannot backpropagate to sequence indicators")
	}
	return nil
}

// grow returns s resized to n elements, reusing its array.
func grow[T Float](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
