package recurrent

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gocaffe/gocaffe/layer"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
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
type recurrent[T layer.Float] struct {
	layer.Base[T]
	typ    string
	hidden int // num_output
	nState int // recurrent states: 1 (h) for RNN, 2 (h, c) for LSTM
	gates  int // rows of the input transform: H for RNN, 4H for LSTM
	expose bool
	static bool
	steps  int // T
	// Set by reshape.
	streams, inDim, staticDim int
	state                     []*blob.Blob[T] // the carried states, N x H each
	initial                   []*blob.Blob[T] // the states this pass started from
	ones                      *blob.Blob[T]   // T*N ones, for the biases
	outShape, stateShape      []int
}

// recurrentOps is a device and the element-wise steps of the recurrent
// layers that its Engine lacks (kernels on the GPU).
type recurrentOps[T layer.Float, A any] interface {
	device.View[T, A]
	// contScale writes y = cont[s] * x for each of n/hidden streams s.
	contScale(n, hidden int, cont, x, y A)
	lstmUnitForward(n, hidden int, cPrev, gates, cont, c, h A)
	lstmUnitBackward(n, hidden int, cPrev, gates, cont, c, dc, dh, dcPrev, dgates A)
	tanhForward(n int, x, y A)
	tanhBackward(n int, dy, y, dx A)
	// fail returns the first error of the steps above.
	fail() error
}

// hostRecurrent runs the steps on the host.
type hostRecurrent[T layer.Float] struct{ device.HostView[T] }

// hostRecurrentOf returns the host's steps for a layer of context c (its
// settings' GEMM choice).
func hostRecurrentOf[T layer.Float](c *device.Context) hostRecurrent[T] {
	return hostRecurrent[T]{device.Host[T](c)}
}

func (hostRecurrent[T]) contScale(n, hidden int, cont, x, y []T) {
	for s, c := range cont[:n/hidden] {
		for d := range hidden {
			y[s*hidden+d] = c * x[s*hidden+d]
		}
	}
}

func (hostRecurrent[T]) lstmUnitForward(n, hidden int, cPrev, gates, cont, c, h []T) {
	lstmUnitForward(cPrev[:n], gates[:4*n], cont[:n/hidden], hidden, c[:n], h[:n])
}

func (hostRecurrent[T]) lstmUnitBackward(n, hidden int, cPrev, gates, cont, c, dc, dh, dcPrev, dgates []T) {
	lstmUnitBackward(cPrev[:n], gates[:4*n], cont[:n/hidden], hidden, c[:n], dc[:n], dh[:n], dcPrev[:n], dgates[:4*n])
}

func (hostRecurrent[T]) tanhForward(n int, x, y []T) {
	for i, v := range x[:n] {
		y[i] = tanhT(v)
	}
}

func (hostRecurrent[T]) tanhBackward(n int, dy, y, dx []T) {
	for i, v := range y[:n] {
		dx[i] = dy[i] * (1 - v*v)
	}
}

func (hostRecurrent[T]) fail() error { return nil }

// buffer returns *p, created on m's device if nil, reshaped to n
// elements.
func buffer[T layer.Float](m kit.BlobMaker[T], p **blob.Blob[T], n int) (*blob.Blob[T], error) {
	if err := kit.EnsureBlob(m, p); err != nil {
		return nil, err
	}
	return *p, (*p).Reshape([]int{n})
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
func (l *recurrent[T]) Counts() layer.BlobCounts {
	minBottom := 2
	nTop := 1
	if l.expose {
		minBottom += l.nState
		nTop += l.nState
	}
	return layer.BlobCounts{Bottom: layer.Between(minBottom, minBottom+1), Top: layer.Exactly(nTop)}
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
		logf.Warnf(l.Logger(), "%s layer %s: expose_hidden passes the states' values but, as in Caffe, no gradient through them", l.typ, l.Name())
	}
	l.static = len(bottom) > 2+nHidden
	return nil
}

// addParam appends a learnable blob filled by recurrent_param's weight or
// bias filler.
func (l *recurrent[T]) addParam(bias bool, shape ...int) error {
	rp := l.Param().GetRecurrentParam()
	fp := rp.GetWeightFiller()
	if bias {
		fp = rp.GetBiasFiller()
	}
	b, err := l.NewParamBlob(fp, shape...)
	if err != nil {
		return err
	}
	l.AddBlob(b)
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
		l.state, l.initial = make([]*blob.Blob[T], l.nState), make([]*blob.Blob[T], l.nState)
		for i := range l.state {
			if _, err := buffer(l, &l.state[i], n*l.hidden); err != nil {
				return err
			}
			if _, err := buffer(l, &l.initial[i], n*l.hidden); err != nil {
				return err
			}
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
	if err := kit.Ones(l, &l.ones, l.steps*n); err != nil {
		return err
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
// the states carried from the previous pass.
func loadInitial[T layer.Float, A any](l *recurrent[T], d recurrentOps[T, A], bottom []*blob.Blob[T]) {
	first := 2
	if l.static {
		first = 3
	}
	for i, s := range l.initial {
		src := l.state[i]
		if l.expose {
			src = bottom[first+i]
		}
		d.Copy(l.streams*l.hidden, d.Data(src), d.MutableData(s))
	}
}

// finishForward keeps the final states for the next pass, or hands them to
// the exposed tops.
func finishForward[T layer.Float, A any](l *recurrent[T], d recurrentOps[T, A], top []*blob.Blob[T], final ...A) {
	for i, f := range final {
		dst := l.state[i]
		if l.expose {
			dst = top[1+i]
		}
		d.Copy(l.streams*l.hidden, f, d.MutableData(dst))
	}
}

// Reset zeroes the carried states (Caffe's RecurrentLayer::Reset).
func (l *recurrent[T]) Reset() {
	for _, s := range l.state {
		clear(s.MutableCPUData())
	}
}

// inputTransform computes out (T*N x gates) = x (T*N x I) W^T + b, and with
// a static input xsOut (N x gates) = x_static W_static^T.
func inputTransform[T layer.Float, A any](l *recurrent[T], d recurrentOps[T, A], bottom []*blob.Blob[T], out, xsOut A) {
	rows := l.steps * l.streams
	d.Gemm(blas.NoTrans, blas.Trans, rows, l.gates, l.inDim, 1, d.Data(bottom[0]), d.Data(l.Blobs()[0]), 0, out)
	d.Gemm(blas.NoTrans, blas.NoTrans, rows, l.gates, 1, 1, d.Data(l.ones), d.Data(l.Blobs()[1]), 1, out)
	if l.static {
		d.Gemm(blas.NoTrans, blas.Trans, l.streams, l.gates, l.staticDim, 1, d.Data(bottom[2]), d.Data(l.Blobs()[2]), 0, xsOut)
	}
}

// inputBackward accumulates the input transform's parameter gradients from
// dgates (T*N x gates) and, if propagate, writes x's gradient; likewise for
// the static input with dstatic (N x gates, summed over time).
func inputBackward[T layer.Float, A any](l *recurrent[T], d recurrentOps[T, A], bottom []*blob.Blob[T], propagateDown []bool, dgates, dstatic A) {
	rows := l.steps * l.streams
	w, b := l.Blobs()[0], l.Blobs()[1]
	if l.ParamPropagateDown(0) {
		d.Gemm(blas.Trans, blas.NoTrans, l.gates, l.inDim, rows, 1, dgates, d.Data(bottom[0]), 1, d.MutableDiff(w))
	}
	if l.ParamPropagateDown(1) {
		d.Gemv(blas.Trans, rows, l.gates, 1, dgates, d.Data(l.ones), 1, d.MutableDiff(b))
	}
	if propagateDown[0] {
		d.Gemm(blas.NoTrans, blas.NoTrans, rows, l.inDim, l.gates, 1, dgates, d.Data(w), 0, d.MutableDiff(bottom[0]))
	}
	if !l.static {
		return
	}
	ws := l.Blobs()[2]
	if l.ParamPropagateDown(2) {
		d.Gemm(blas.Trans, blas.NoTrans, l.gates, l.staticDim, l.streams, 1, dstatic, d.Data(bottom[2]), 1, d.MutableDiff(ws))
	}
	if propagateDown[2] {
		d.Gemm(blas.NoTrans, blas.NoTrans, l.streams, l.staticDim, l.gates, 1, dstatic, d.Data(ws), 0, d.MutableDiff(bottom[2]))
	}
}

// checkBackward refuses gradients to cont and the initial states.
func (l *recurrent[T]) checkBackward(propagateDown []bool) error {
	if propagateDown[1] {
		return errors.New("cannot backpropagate to sequence indicators")
	}
	return nil
}
