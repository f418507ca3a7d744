package layer

import (
	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() { register("RNN", newRNN[float32], newRNN[float64]) }

// RNN is a simple recurrent layer over time-major sequences (Caffe's
// RNNLayer; see recurrent for the bottoms, tops and state handling). At
// step t:
//
//	h_t = tanh(W_xh x_t + b_h [+ W_xh_static x_static] + W_hh (cont_t h_{t-1}))
//	o_t = tanh(W_ho h_t + b_o)
//
// and the output is o. Learnable blobs, as Caffe's: W_xh (H x I), b_h (H),
// W_xh_static (H x S, with a static input), W_hh (H x H), W_ho (H x H),
// b_o (H), H = num_output.
type RNN[T Float] struct {
	recurrent[T]
	// Per pass: pre-activations become hidden states in place (T x N x H),
	// conted previous hidden states, the static transform.
	hid, hc, xs []T
	// Backward scratch.
	dpre, dstatic, dhNext, dh, dout []T
}

func newRNN[T Float](p *caffepb.LayerParameter) (Layer[T], error) {
	l := &RNN[T]{}
	if err := l.init(p, "RNN", 1, 1); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "RNN".
func (*RNN[T]) Type() string { return "RNN" }

// param indices past the input transform.
func (l *RNN[T]) whh() *blob.Blob[T] { return l.blobs[len(l.blobs)-3] }
func (l *RNN[T]) who() *blob.Blob[T] { return l.blobs[len(l.blobs)-2] }
func (l *RNN[T]) bo() *blob.Blob[T]  { return l.blobs[len(l.blobs)-1] }

// LayerSetUp creates (or checks) the learnable blobs.
func (l *RNN[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if err := l.setUpShapes(bottom); err != nil {
		return err
	}
	h := l.hidden
	shapes := [][]int{{h, bottom[0].CountFrom(2)}, {h}}
	names := []string{"W_xh", "b_h"}
	if l.static {
		shapes = append(shapes, []int{h, bottom[2].CountFrom(1)})
		names = append(names, "W_xh_static")
	}
	shapes = append(shapes, []int{h, h}, []int{h, h}, []int{h})
	names = append(names, "W_hh", "W_ho", "b_o")
	if len(l.blobs) > 0 {
		return l.checkParamShapes(names, shapes...)
	}
	for i, s := range shapes {
		if err := l.addParam(names[i] == "b_h" || names[i] == "b_o", s...); err != nil {
			return err
		}
	}
	return nil
}

// Reshape sizes the tops and buffers.
func (l *RNN[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := l.reshape(bottom, top); err != nil {
		return err
	}
	tn := l.steps * l.streams
	l.hid = grow(l.hid, tn*l.hidden)
	l.hc = grow(l.hc, tn*l.hidden)
	l.xs = grow(l.xs, l.streams*l.hidden)
	return nil
}

// ForwardCPU runs the T steps.
func (l *RNN[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	n, h := l.streams, l.hidden
	l.inputTransform(bottom[0].CPUData(), l.blobs[0], l.blobs[1], l.hid)
	if l.static {
		l.staticTransform(bottom[2].CPUData(), l.blobs[2], l.xs)
	}
	cont, out := bottom[1].CPUData(), top[0].MutableCPUData()
	hPrev := l.loadInitial(bottom)[0]
	whh, who, bo := l.whh().CPUData(), l.who().CPUData(), l.bo().CPUData()
	for t := range l.steps {
		ht := l.hid[t*n*h : (t+1)*n*h]
		if l.static {
			mathfn.Axpy(n*h, 1, l.xs, ht)
		}
		hc := l.hc[t*n*h : (t+1)*n*h]
		l.contHidden(cont[t*n:(t+1)*n], hPrev, hc)
		mathfn.Gemm(blas.NoTrans, blas.Trans, n, h, h, 1, hc, whh, 1, ht)
		for i, v := range ht {
			ht[i] = tanhT(v)
		}
		ot := out[t*n*h : (t+1)*n*h]
		for r := range n {
			copy(ot[r*h:(r+1)*h], bo)
		}
		mathfn.Gemm(blas.NoTrans, blas.Trans, n, h, h, 1, ht, who, 1, ot)
		for i, v := range ot {
			ot[i] = tanhT(v)
		}
		hPrev = ht
	}
	l.finishForward(top, hPrev)
	return nil
}

// BackwardCPU runs back through time, then through the input transforms.
func (l *RNN[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if err := l.checkBackward(propagateDown); err != nil {
		return err
	}
	n, h := l.streams, l.hidden
	tn := l.steps * n
	l.dpre = grow(l.dpre, tn*h)
	l.dstatic = grow(l.dstatic, n*h)
	l.dhNext, l.dh, l.dout = grow(l.dhNext, n*h), grow(l.dh, n*h), grow(l.dout, n*h)
	clear(l.dhNext)
	clear(l.dstatic)
	cont, out, dout := bottom[1].CPUData(), top[0].CPUData(), top[0].CPUDiff()
	whh, who, bo := l.whh(), l.who(), l.bo()
	iWhh, iWho, iBo := len(l.blobs)-3, len(l.blobs)-2, len(l.blobs)-1
	for t := l.steps - 1; t >= 0; t-- {
		ht := l.hid[t*n*h : (t+1)*n*h]
		// Through o_t = tanh(W_ho h_t + b_o).
		for i := range l.dout {
			o := out[t*n*h+i]
			l.dout[i] = dout[t*n*h+i] * (1 - o*o)
		}
		if l.ParamPropagateDown(iWho) {
			mathfn.Gemm(blas.Trans, blas.NoTrans, h, h, n, 1, l.dout, ht, 1, who.MutableCPUDiff())
		}
		if l.ParamPropagateDown(iBo) {
			db := bo.MutableCPUDiff()
			for r := range n {
				mathfn.Axpy(h, 1, l.dout[r*h:(r+1)*h], db)
			}
		}
		copy(l.dh, l.dhNext)
		mathfn.Gemm(blas.NoTrans, blas.NoTrans, n, h, h, 1, l.dout, who.CPUData(), 1, l.dh)
		// Through h_t = tanh(pre_t).
		dp := l.dpre[t*n*h : (t+1)*n*h]
		for i, v := range ht {
			dp[i] = l.dh[i] * (1 - v*v)
		}
		if l.ParamPropagateDown(iWhh) {
			mathfn.Gemm(blas.Trans, blas.NoTrans, h, h, n, 1, dp, l.hc[t*n*h:(t+1)*n*h], 1, whh.MutableCPUDiff())
		}
		mathfn.Gemm(blas.NoTrans, blas.NoTrans, n, h, h, 1, dp, whh.CPUData(), 0, l.dh)
		l.contHidden(cont[t*n:(t+1)*n], l.dh, l.dhNext)
		if l.static {
			mathfn.Axpy(n*h, 1, dp, l.dstatic)
		}
	}
	var ws *blob.Blob[T]
	if l.static {
		ws = l.blobs[2]
	}
	l.inputBackward(bottom, propagateDown, l.dpre, l.dstatic, l.blobs[0], l.blobs[1], ws)
	return nil
}
