package recurrent

import (
	"github.com/gocaffe/gocaffe/layer"
	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "RNN",
		New32: newRNN[float32], New64: newRNN[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newRNNGPU[float32], newRNNGPU[float64])},
		ONNXWhy: "gocaffe writes no ONNX form of the recurrent layers",
	})
}

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
type rnnLayer[T layer.Float] struct {
	recurrent[T]
	// Per pass: hidden states (T x N x H, first the pre-activations),
	// conted previous hidden states, the static transform; backward
	// scratch.
	hid, hc, xs                     *blob.Blob[T]
	dpre, dstatic, dhNext, dh, dout *blob.Blob[T]
}

func newRNN[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &rnnLayer[T]{}
	if err := l.init(p, "RNN", 1, 1); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "RNN".
func (*rnnLayer[T]) Type() string { return "RNN" }

// param indices past the input transform.
func (l *rnnLayer[T]) whh() *blob.Blob[T] { return l.Blobs()[len(l.Blobs())-3] }
func (l *rnnLayer[T]) who() *blob.Blob[T] { return l.Blobs()[len(l.Blobs())-2] }
func (l *rnnLayer[T]) bo() *blob.Blob[T]  { return l.Blobs()[len(l.Blobs())-1] }

// LayerSetUp creates (or checks) the learnable blobs.
func (l *rnnLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
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
	if len(l.Blobs()) > 0 {
		return l.CheckParamShapes(names, shapes...)
	}
	for i, s := range shapes {
		if err := l.addParam(names[i] == "b_h" || names[i] == "b_o", s...); err != nil {
			return err
		}
	}
	return nil
}

// Reshape sizes the tops and buffers.
func (l *rnnLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := l.reshape(bottom, top); err != nil {
		return err
	}
	tn, nh := l.steps*l.streams, l.streams*l.hidden
	for _, b := range []struct {
		p **blob.Blob[T]
		n int
	}{{&l.hid, tn * l.hidden}, {&l.hc, tn * l.hidden}, {&l.xs, nh}, {&l.dpre, tn * l.hidden}, {&l.dstatic, nh},
		{&l.dhNext, nh}, {&l.dh, nh}, {&l.dout, nh}} {
		if _, err := buffer(l, b.p, b.n); err != nil {
			return err
		}
	}
	return nil
}

// ForwardCPU runs the T steps on the host.
func (l *rnnLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return rnnForward[T](l, hostRecurrentOf[T](l.Context()), bottom, top)
}

// BackwardCPU runs back through time on the host.
func (l *rnnLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return rnnBackward[T](l, hostRecurrentOf[T](l.Context()), top, propagateDown, bottom)
}

func rnnForward[T layer.Float, A any](l *rnnLayer[T], d recurrentOps[T, A], bottom, top []*blob.Blob[T]) error {
	n, h := l.streams, l.hidden
	hid, xs, hcBuf := d.MutableData(l.hid), d.MutableData(l.xs), d.MutableData(l.hc)
	inputTransform(&l.recurrent, d, bottom, hid, xs)
	loadInitial(&l.recurrent, d, bottom)
	cont, out := d.Data(bottom[1]), d.MutableData(top[0])
	hPrev := d.Data(l.initial[0])
	whh, who, bo, ones := d.Data(l.whh()), d.Data(l.who()), d.Data(l.bo()), d.Data(l.ones)
	for t := range l.steps {
		ht := d.Offset(hid, t*n*h)
		if l.static {
			d.Axpy(n*h, 1, xs, ht)
		}
		hc := d.Offset(hcBuf, t*n*h)
		d.contScale(n*h, h, d.Offset(cont, t*n), hPrev, hc)
		d.Gemm(blas.NoTrans, blas.Trans, n, h, h, 1, hc, whh, 1, ht)
		d.tanhForward(n*h, ht, ht)
		ot := d.Offset(out, t*n*h)
		d.Gemm(blas.NoTrans, blas.NoTrans, n, h, 1, 1, ones, bo, 0, ot)
		d.Gemm(blas.NoTrans, blas.Trans, n, h, h, 1, ht, who, 1, ot)
		d.tanhForward(n*h, ot, ot)
		hPrev = ht
	}
	finishForward(&l.recurrent, d, top, hPrev)
	if err := d.fail(); err != nil {
		return err
	}
	return d.Err()
}

func rnnBackward[T layer.Float, A any](l *rnnLayer[T], d recurrentOps[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if err := l.checkBackward(propagateDown); err != nil {
		return err
	}
	n, h := l.streams, l.hidden
	dpre, dstatic, dhNext, dh, doutBuf := d.MutableData(l.dpre), d.MutableData(l.dstatic), d.MutableData(l.dhNext), d.MutableData(l.dh), d.MutableData(l.dout)
	d.Set(n*h, 0, dhNext)
	d.Set(n*h, 0, dstatic)
	cont, out, dout := d.Data(bottom[1]), d.Data(top[0]), d.Diff(top[0])
	hid, hcBuf, ones := d.Data(l.hid), d.Data(l.hc), d.Data(l.ones)
	whh, who, bo := l.whh(), l.who(), l.bo()
	iWhh, iWho, iBo := len(l.Blobs())-3, len(l.Blobs())-2, len(l.Blobs())-1
	for t := l.steps - 1; t >= 0; t-- {
		ht := d.Offset(hid, t*n*h)
		// Through o_t = tanh(W_ho h_t + b_o).
		d.tanhBackward(n*h, d.Offset(dout, t*n*h), d.Offset(out, t*n*h), doutBuf)
		if l.ParamPropagateDown(iWho) {
			d.Gemm(blas.Trans, blas.NoTrans, h, h, n, 1, doutBuf, ht, 1, d.MutableDiff(who))
		}
		if l.ParamPropagateDown(iBo) {
			d.Gemv(blas.Trans, n, h, 1, doutBuf, ones, 1, d.MutableDiff(bo))
		}
		d.Copy(n*h, dhNext, dh)
		d.Gemm(blas.NoTrans, blas.NoTrans, n, h, h, 1, doutBuf, d.Data(who), 1, dh)
		// Through h_t = tanh(pre_t).
		dp := d.Offset(dpre, t*n*h)
		d.tanhBackward(n*h, dh, ht, dp)
		if l.ParamPropagateDown(iWhh) {
			d.Gemm(blas.Trans, blas.NoTrans, h, h, n, 1, dp, d.Offset(hcBuf, t*n*h), 1, d.MutableDiff(whh))
		}
		d.Gemm(blas.NoTrans, blas.NoTrans, n, h, h, 1, dp, d.Data(whh), 0, dh)
		d.contScale(n*h, h, d.Offset(cont, t*n), dh, dhNext)
		if l.static {
			d.Axpy(n*h, 1, dp, dstatic)
		}
	}
	inputBackward(&l.recurrent, d, bottom, propagateDown, dpre, dstatic)
	if err := d.fail(); err != nil {
		return err
	}
	return d.Err()
}
