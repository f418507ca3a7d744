//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "gocaffe_cudnn.h"
*/
import "C"

import (
	"fmt"
	"sync"
)

var (
	dnnLoadOnce sync.Once
	dnnLoadErr  error
)

// loadDNN opens libcudnn once per process. (A context whose settings
// switch cuDNN off never asks: device.Context.DNN.)
func loadDNN() error {
	dnnLoadOnce.Do(func() {
		var buf [512]C.char
		if C.gc_dnn_load(&buf[0], C.int(len(buf))) != 0 {
			dnnLoadErr = fmt.Errorf("%w: %s", ErrNoCuDNN, C.GoString(&buf[0]))
		}
	})
	return dnnLoadErr
}

// CuDNNVersion returns the version of the cuDNN library found (e.g. 91400
// for 9.14.0), loading it if need be.
func CuDNNVersion() (int, error) {
	if err := loadDNN(); err != nil {
		return 0, err
	}
	return int(C.gc_dnn_version()), nil
}

func dnnError(call string, s C.int) error {
	switch {
	case s == 0:
		return nil
	case s == -1000:
		return fmt.Errorf("cuda: %s: %w", call, ErrNoCuDNN)
	case s < 0:
		return driverError(call, C.CUresult(-s))
	}
	msg := C.GoString(C.gc_dnn_error_string(s))
	return &Error{Lib: "cuDNN", Call: call, Code: int(s), Name: msg}
}

// DNN is a device's cuDNN handle, bound to its compute stream, for one
// goroutine at a time (as the stream).
type DNN struct {
	dev *Device
	h   C.gc_dnn_t
}

// DNN returns the device's cuDNN handle, loading libcudnn (9, or 8) and
// creating the handle on first use. Without the library the error wraps
// ErrNoCuDNN and says what the loader said.
func (d *Device) DNN() (*DNN, error) {
	d.dnnOnce.Do(func() {
		if err := loadDNN(); err != nil {
			d.dnnErr = err
			return
		}
		h := &DNN{dev: d}
		if err := dnnError(fmt.Sprintf("cudnnCreate(device %d)", d.ordinal), C.gc_dnn_create(d.ctx, &h.h, d.stream.s)); err != nil {
			d.dnnErr = err
			return
		}
		d.dnn = h
	})
	return d.dnn, d.dnnErr
}

// The descriptor kinds of gc_dnn_desc_create.
const (
	descTensor = iota
	descFilter
	descConv
	descPool
	descActivation
	descLRN
)

// desc is a cuDNN descriptor of some kind.
type desc struct {
	kind int
	p    C.gc_dnn_desc_t
}

func newDesc(kind int) (desc, error) {
	d := desc{kind: kind}
	return d, dnnError("cudnnCreate*Descriptor", C.gc_dnn_desc_create(C.int(kind), &d.p))
}

// Destroy frees the descriptor; a zero one is left alone.
//
//apigen:stub return nil
func (d *desc) Destroy() error {
	if d.p == nil {
		return nil
	}
	err := dnnError("cudnnDestroy*Descriptor", C.gc_dnn_desc_destroy(C.int(d.kind), d.p))
	d.p = nil
	return err
}

// cints converts to C ints, padding on the left with 1s to at least min.
func cints(v []int, min int) []C.int {
	out := make([]C.int, 0, max(len(v), min))
	for range min - len(v) {
		out = append(out, 1)
	}
	for _, x := range v {
		out = append(out, C.int(x))
	}
	return out
}

// TensorDesc describes a packed tensor of logical dims N, C, spatial...:
// row-major (NCHW...), or channels-last (NHWC...: C varies fastest) when
// Layout is LayoutNHWC.
type TensorDesc struct {
	desc
	Type   DNNType
	Layout Layout
	dims   []int // as set, at least 4 (the graph API's plans read them)
}

// NewTensorDesc returns a tensor descriptor of type t and dims (fewer than
// 4 are padded with leading 1s).
func NewTensorDesc(t DNNType, dims []int) (*TensorDesc, error) {
	d, err := newDesc(descTensor)
	if err != nil {
		return nil, err
	}
	td := &TensorDesc{desc: d, Type: t}
	if err := td.Set(dims); err != nil {
		td.Destroy()
		return nil, err
	}
	return td, nil
}

// NewTensorDescNHWC returns a descriptor of the logical dims N, C,
// spatial... (at least 3) stored channels-last.
func NewTensorDescNHWC(t DNNType, dims []int) (*TensorDesc, error) {
	d, err := newDesc(descTensor)
	if err != nil {
		return nil, err
	}
	td := &TensorDesc{desc: d, Type: t, Layout: LayoutNHWC}
	if err := td.Set(dims); err != nil {
		td.Destroy()
		return nil, err
	}
	return td, nil
}

// Set gives the tensor new dims, in its layout.
func (t *TensorDesc) Set(dims []int) error {
	cd := cints(dims, 4)
	di := make([]int, len(cd))
	for i, v := range cd {
		di[i] = int(v)
	}
	t.dims = di
	cs := cints(t.Layout.Strides(di), 0)
	return dnnError(fmt.Sprintf("cudnnSetTensorNdDescriptor(%v)", dims), C.gc_dnn_set_tensor(t.p, C.int(t.Type), C.int(len(cd)), &cd[0], &cs[0]))
}

// FilterDesc describes convolution weights (output, input/group, kernel...).
type FilterDesc struct {
	desc
	typ    DNNType
	layout Layout
	dims   []int
}

// NewFilterDesc returns a filter descriptor of type t and dims (output,
// input/group, kernel...), stored in that order.
func NewFilterDesc(t DNNType, dims []int) (*FilterDesc, error) {
	return NewFilterDescIn(t, LayoutNCHW, dims)
}

// NewFilterDescIn returns a filter descriptor of type t and logical dims
// (output, input/group, kernel...) stored in layout l: with LayoutNHWC the
// input channels vary fastest (output, kernel..., input), as cuDNN's
// channels-last convolutions want their weights.
func NewFilterDescIn(t DNNType, l Layout, dims []int) (*FilterDesc, error) {
	d, err := newDesc(descFilter)
	if err != nil {
		return nil, err
	}
	fd := &FilterDesc{desc: d, typ: t, layout: l}
	cd := cints(dims, 4)
	for _, v := range cd {
		fd.dims = append(fd.dims, int(v))
	}
	format := C.int(C.GC_DNN_NCHW)
	if l == LayoutNHWC {
		format = C.GC_DNN_NHWC
	}
	if err := dnnError(fmt.Sprintf("cudnnSetFilterNdDescriptor(%v, %v)", dims, l), C.gc_dnn_set_filter(fd.p, C.int(t), format, C.int(len(cd)), &cd[0])); err != nil {
		fd.Destroy()
		return nil, err
	}
	return fd, nil
}

// ConvDesc describes a convolution (Caffe's: cross-correlation).
type ConvDesc struct {
	desc
	typ                     DNNType // what the products sum in
	pads, strides, dilation []int   // per spatial axis, at least 2
	groups                  int
}

// NewConvDesc returns a convolution descriptor of pads, strides and
// dilations per spatial axis (at least 2: a 1-D convolution is given as
// 2-D with leading 1s), groups, computing in t; tf32 lets float32 run on
// TF32 tensor cores, otherwise only FMA kernels are used (strict FP32).
func NewConvDesc(t DNNType, pads, strides, dilations []int, groups int, tf32 bool) (*ConvDesc, error) {
	d, err := newDesc(descConv)
	if err != nil {
		return nil, err
	}
	cd := &ConvDesc{desc: d, typ: t, groups: groups}
	n := max(len(pads), 2)
	p, s, dl := cints(pads, n), cints(strides, n), cints(dilations, n)
	for i := range n - len(pads) { // padded axes: no padding, stride 1
		p[i], s[i], dl[i] = 0, 1, 1
	}
	for i := range n {
		cd.pads = append(cd.pads, int(p[i]))
		cd.strides = append(cd.strides, int(s[i]))
		cd.dilation = append(cd.dilation, int(dl[i]))
	}
	math := C.int(C.GC_DNN_FMA_MATH)
	if tf32 || t == DNNDouble {
		math = C.GC_DNN_DEFAULT_MATH
	}
	if tf32 && t == DNNFloat {
		math = C.GC_DNN_TENSOR_OP_MATH
	}
	if err := dnnError("cudnnSetConvolutionNdDescriptor", C.gc_dnn_set_conv(cd.p, C.int(n), &p[0], &s[0], &dl[0], C.int(t), C.int(groups), math)); err != nil {
		cd.Destroy()
		return nil, err
	}
	return cd, nil
}

// PoolDesc describes a pooling.
type PoolDesc struct{ desc }

// NewPoolDesc returns a pooling descriptor of mode, window, pads and
// strides per spatial axis.
func NewPoolDesc(mode PoolMode, window, pads, strides []int) (*PoolDesc, error) {
	d, err := newDesc(descPool)
	if err != nil {
		return nil, err
	}
	pd := &PoolDesc{d}
	w, p, s := cints(window, 0), cints(pads, 0), cints(strides, 0)
	if err := dnnError("cudnnSetPoolingNdDescriptor", C.gc_dnn_set_pooling(pd.p, C.int(mode), C.int(len(w)), &w[0], &p[0], &s[0])); err != nil {
		pd.Destroy()
		return nil, err
	}
	return pd, nil
}

// ActivationDesc describes an activation.
type ActivationDesc struct{ desc }

// NewActivationDesc returns an activation descriptor of mode.
func NewActivationDesc(mode ActivationMode) (*ActivationDesc, error) {
	d, err := newDesc(descActivation)
	if err != nil {
		return nil, err
	}
	ad := &ActivationDesc{d}
	if err := dnnError("cudnnSetActivationDescriptor", C.gc_dnn_set_activation(ad.p, C.int(mode))); err != nil {
		ad.Destroy()
		return nil, err
	}
	return ad, nil
}

// LRNDesc describes a cross-channel local response normalization.
type LRNDesc struct{ desc }

// NewLRNDesc returns an LRN descriptor: y = x / (k + alpha/n * the sum of
// x^2 over n channels)^beta, Caffe's ACROSS_CHANNELS.
func NewLRNDesc(n int, alpha, beta, k float64) (*LRNDesc, error) {
	d, err := newDesc(descLRN)
	if err != nil {
		return nil, err
	}
	ld := &LRNDesc{d}
	if err := dnnError("cudnnSetLRNDescriptor", C.gc_dnn_set_lrn(ld.p, C.uint(n), C.double(alpha), C.double(beta), C.double(k))); err != nil {
		ld.Destroy()
		return nil, err
	}
	return ld, nil
}

// ConvForwardAlgo returns the fastest forward algorithm (by cuDNN's
// heuristics) needing at most maxWorkspace bytes.
func (n *DNN) ConvForwardAlgo(x *TensorDesc, w *FilterDesc, c *ConvDesc, y *TensorDesc, maxWorkspace int) (ConvAlgo, error) {
	return n.algo(0, x, w, c, y, maxWorkspace)
}

// ConvBackwardDataAlgo is ConvForwardAlgo for the data gradient.
func (n *DNN) ConvBackwardDataAlgo(dx *TensorDesc, w *FilterDesc, c *ConvDesc, dy *TensorDesc, maxWorkspace int) (ConvAlgo, error) {
	return n.algo(1, dx, w, c, dy, maxWorkspace)
}

// ConvBackwardFilterAlgo is ConvForwardAlgo for the weight gradient.
func (n *DNN) ConvBackwardFilterAlgo(x *TensorDesc, dw *FilterDesc, c *ConvDesc, dy *TensorDesc, maxWorkspace int) (ConvAlgo, error) {
	return n.algo(2, x, dw, c, dy, maxWorkspace)
}

func (n *DNN) algo(which int, x *TensorDesc, w *FilterDesc, c *ConvDesc, y *TensorDesc, maxWorkspace int) (ConvAlgo, error) {
	var a C.gc_dnn_algo
	err := dnnError(fmt.Sprintf("cudnnGetConvolution%sAlgorithm_v7", [...]string{"Forward", "BackwardData", "BackwardFilter"}[which]),
		C.gc_dnn_conv_algo(n.dev.ctx, n.h, C.int(which), x.p, w.p, c.p, y.p, C.size_t(maxWorkspace), &a))
	return ConvAlgo{Algo: int(a.algo), Workspace: int(a.memory)}, err
}

// ConvDeterministicAlgo returns the fastest algorithm of pass which (0
// forward, 1 data gradient, 2 weight gradient; the descriptors as for
// ConvForwardAlgo) by cuDNN's heuristics that gives the same result bit
// for bit on every run and needs at most maxWorkspace bytes.
func (n *DNN) ConvDeterministicAlgo(which int, x *TensorDesc, w *FilterDesc, c *ConvDesc, y *TensorDesc, maxWorkspace int) (ConvAlgo, error) {
	var a C.gc_dnn_algo
	err := dnnError("a deterministic convolution algorithm", C.gc_dnn_conv_algo_policy(n.dev.ctx, n.h, C.int(which), 1, x.p, w.p, c.p, y.p, C.size_t(maxWorkspace), &a))
	return ConvAlgo{Algo: int(a.algo), Workspace: int(a.memory)}, err
}

// ConvSearchWorkspace returns the largest workspace, at most maxWorkspace
// bytes, that one of pass which's algorithms needs: what ConvFind needs to
// time every algorithm that fits.
func (n *DNN) ConvSearchWorkspace(which int, x *TensorDesc, w *FilterDesc, c *ConvDesc, y *TensorDesc, maxWorkspace int) (int, error) {
	var a C.gc_dnn_algo
	err := dnnError(fmt.Sprintf("cudnnGetConvolution%sAlgorithm_v7", [...]string{"Forward", "BackwardData", "BackwardFilter"}[which]),
		C.gc_dnn_conv_algo_policy(n.dev.ctx, n.h, C.int(which), 2, x.p, w.p, c.p, y.p, C.size_t(maxWorkspace), &a))
	return int(a.memory), err
}

// ConvFind runs the algorithms of one pass on real memory and returns the
// fastest that fits the workspace ws of wsBytes (cudnnFind*AlgorithmEx,
// PyTorch's cudnn.benchmark): which is 0 for forward (y is written), 1 for
// the data gradient (w and dy = y are read, dx = x is written), 2 for the
// weight gradient (x and dy = y are read, dw = w is written). Give it
// scratch memory wherever it writes what must be kept. Tensor-core math
// only with tf32.
func (n *DNN) ConvFind(which int, x *TensorDesc, xp DevicePtr, w *FilterDesc, wp DevicePtr, c *ConvDesc, y *TensorDesc, yp DevicePtr, ws DevicePtr, wsBytes int, tf32 bool) (ConvAlgo, error) {
	var a C.gc_dnn_algo
	t := C.int(0)
	if tf32 {
		t = 1
	}
	err := dnnError(fmt.Sprintf("cudnnFindConvolution%sAlgorithmEx", [...]string{"Forward", "BackwardData", "BackwardFilter"}[which]),
		C.gc_dnn_conv_find(n.dev.ctx, n.h, C.int(which), t, x.p, dp(xp), w.p, dp(wp), c.p, y.p, dp(yp), dp(ws), C.size_t(wsBytes), &a))
	return ConvAlgo{Algo: int(a.algo), Workspace: int(a.memory)}, err
}

func dbl(t DNNType) C.int {
	if t == DNNDouble {
		return 1
	}
	return 0
}

// ConvForward computes y = alpha * conv(x, w) + beta * y with algorithm a
// and workspace ws (at least a.Workspace bytes).
func (n *DNN) ConvForward(alpha float64, x *TensorDesc, xp DevicePtr, w *FilterDesc, wp DevicePtr, c *ConvDesc, a ConvAlgo, ws DevicePtr, beta float64, y *TensorDesc, yp DevicePtr) error {
	if a.Plan != nil && a.Plan.takes(alpha, beta, xp, wp, yp, ws) {
		return n.runPlan(a.Plan, xp, wp, yp, ws)
	}
	return dnnError(fmt.Sprintf("cudnnConvolutionForward(algo %d, workspace %d)", a.Algo, a.Workspace), C.gc_dnn_conv_forward(n.dev.ctx, n.h, dbl(x.Type), C.double(alpha), x.p, dp(xp), w.p, dp(wp), c.p, C.int(a.Algo), dp(ws), C.size_t(a.Workspace), C.double(beta), y.p, dp(yp)))
}

// ConvBackwardData computes dx = alpha * conv^T(dy, w) + beta * dx.
func (n *DNN) ConvBackwardData(alpha float64, w *FilterDesc, wp DevicePtr, dy *TensorDesc, dyp DevicePtr, c *ConvDesc, a ConvAlgo, ws DevicePtr, beta float64, dx *TensorDesc, dxp DevicePtr) error {
	if a.Plan != nil && a.Plan.takes(alpha, beta, dxp, wp, dyp, ws) {
		return n.runPlan(a.Plan, dxp, wp, dyp, ws)
	}
	return dnnError(fmt.Sprintf("cudnnConvolutionBackwardData(algo %d, workspace %d)", a.Algo, a.Workspace), C.gc_dnn_conv_backward_data(n.dev.ctx, n.h, dbl(dy.Type), C.double(alpha), w.p, dp(wp), dy.p, dp(dyp), c.p, C.int(a.Algo), dp(ws), C.size_t(a.Workspace), C.double(beta), dx.p, dp(dxp)))
}

// ConvBackwardFilter computes dw = alpha * (the weight gradient of x and
// dy) + beta * dw.
func (n *DNN) ConvBackwardFilter(alpha float64, x *TensorDesc, xp DevicePtr, dy *TensorDesc, dyp DevicePtr, c *ConvDesc, a ConvAlgo, ws DevicePtr, beta float64, dw *FilterDesc, dwp DevicePtr) error {
	if a.Plan != nil && a.Plan.takes(alpha, beta, xp, dwp, dyp, ws) {
		return n.runPlan(a.Plan, xp, dwp, dyp, ws)
	}
	return dnnError(fmt.Sprintf("cudnnConvolutionBackwardFilter(algo %d, workspace %d)", a.Algo, a.Workspace), C.gc_dnn_conv_backward_filter(n.dev.ctx, n.h, dbl(x.Type), C.double(alpha), x.p, dp(xp), dy.p, dp(dyp), c.p, C.int(a.Algo), dp(ws), C.size_t(a.Workspace), C.double(beta), dw.p, dp(dwp)))
}

// ConvBackwardBias computes db = alpha * (dy summed over all but the
// channel axis) + beta * db.
func (n *DNN) ConvBackwardBias(alpha float64, dy *TensorDesc, dyp DevicePtr, beta float64, db *TensorDesc, dbp DevicePtr) error {
	return dnnError("cudnnConvolutionBackwardBias", C.gc_dnn_conv_backward_bias(n.dev.ctx, n.h, dbl(dy.Type), C.double(alpha), dy.p, dp(dyp), C.double(beta), db.p, dp(dbp)))
}

// AddTensor computes c = alpha * a + beta * c, broadcasting a over the
// axes where its size is 1 (a bias over a convolution's output).
func (n *DNN) AddTensor(alpha float64, a *TensorDesc, ap DevicePtr, beta float64, c *TensorDesc, cp DevicePtr) error {
	return dnnError("cudnnAddTensor", C.gc_dnn_add_tensor(n.dev.ctx, n.h, dbl(a.Type), C.double(alpha), a.p, dp(ap), C.double(beta), c.p, dp(cp)))
}

// PoolForward pools x into y.
func (n *DNN) PoolForward(p *PoolDesc, x *TensorDesc, xp DevicePtr, y *TensorDesc, yp DevicePtr) error {
	return dnnError("cudnnPoolingForward", C.gc_dnn_pool_forward(n.dev.ctx, n.h, dbl(x.Type), p.p, x.p, dp(xp), y.p, dp(yp)))
}

// PoolBackward computes dx from y, dy and x.
func (n *DNN) PoolBackward(p *PoolDesc, y *TensorDesc, yp DevicePtr, dy *TensorDesc, dyp DevicePtr, x *TensorDesc, xp DevicePtr, dx *TensorDesc, dxp DevicePtr) error {
	return dnnError("cudnnPoolingBackward", C.gc_dnn_pool_backward(n.dev.ctx, n.h, dbl(x.Type), p.p, y.p, dp(yp), dy.p, dp(dyp), x.p, dp(xp), dx.p, dp(dxp)))
}

// ActivationForward computes y = f(x); y may be x.
func (n *DNN) ActivationForward(a *ActivationDesc, x *TensorDesc, xp DevicePtr, y *TensorDesc, yp DevicePtr) error {
	return dnnError("cudnnActivationForward", C.gc_dnn_act_forward(n.dev.ctx, n.h, dbl(x.Type), a.p, x.p, dp(xp), y.p, dp(yp)))
}

// ActivationBackward computes dx from y, dy and x.
func (n *DNN) ActivationBackward(a *ActivationDesc, y *TensorDesc, yp DevicePtr, dy *TensorDesc, dyp DevicePtr, x *TensorDesc, xp DevicePtr, dx *TensorDesc, dxp DevicePtr) error {
	return dnnError("cudnnActivationBackward", C.gc_dnn_act_backward(n.dev.ctx, n.h, dbl(x.Type), a.p, y.p, dp(yp), dy.p, dp(dyp), x.p, dp(xp), dx.p, dp(dxp)))
}

// SoftmaxForward computes the softmax over the channel axis (the second)
// of x into y.
func (n *DNN) SoftmaxForward(x *TensorDesc, xp DevicePtr, y *TensorDesc, yp DevicePtr) error {
	return dnnError("cudnnSoftmaxForward", C.gc_dnn_softmax_forward(n.dev.ctx, n.h, dbl(x.Type), x.p, dp(xp), y.p, dp(yp)))
}

// SoftmaxBackward computes dx from y and dy.
func (n *DNN) SoftmaxBackward(y *TensorDesc, yp DevicePtr, dy *TensorDesc, dyp DevicePtr, dx *TensorDesc, dxp DevicePtr) error {
	return dnnError("cudnnSoftmaxBackward", C.gc_dnn_softmax_backward(n.dev.ctx, n.h, dbl(y.Type), y.p, dp(yp), dy.p, dp(dyp), dx.p, dp(dxp)))
}

// LRNForward normalizes x into y.
func (n *DNN) LRNForward(l *LRNDesc, x *TensorDesc, xp DevicePtr, y *TensorDesc, yp DevicePtr) error {
	return dnnError("cudnnLRNCrossChannelForward", C.gc_dnn_lrn_forward(n.dev.ctx, n.h, dbl(x.Type), l.p, x.p, dp(xp), y.p, dp(yp)))
}

// LRNBackward computes dx from y, dy and x.
func (n *DNN) LRNBackward(l *LRNDesc, y *TensorDesc, yp DevicePtr, dy *TensorDesc, dyp DevicePtr, x *TensorDesc, xp DevicePtr, dx *TensorDesc, dxp DevicePtr) error {
	return dnnError("cudnnLRNCrossChannelBackward", C.gc_dnn_lrn_backward(n.dev.ctx, n.h, dbl(x.Type), l.p, y.p, dp(yp), dy.p, dp(dyp), x.p, dp(xp), dx.p, dp(dxp)))
}

// BatchNormMinEpsilon returns the smallest epsilon cuDNN's batch
// normalization takes; ok is false when the loaded cuDNN lacks it.
func (n *DNN) BatchNormMinEpsilon() (eps float64, ok bool) {
	if C.gc_dnn_bn_available() == 0 {
		return 0, false
	}
	return float64(C.gc_dnn_bn_min_epsilon()), true
}

// BatchNormForwardTraining normalizes x into y per channel with the
// batch's statistics: y = (x - mean) / sqrt(var + eps), var biased; b's
// Mean and Var receive the batch's mean and unbiased variance.
func (n *DNN) BatchNormForwardTraining(x *TensorDesc, xp DevicePtr, y *TensorDesc, yp DevicePtr, b *BatchNormBuffers, eps float64) error {
	return dnnError("cudnnBatchNormalizationForwardTraining", C.gc_dnn_bn_forward_training(n.dev.ctx, n.h, dbl(x.Type),
		x.p, dp(xp), y.p, dp(yp), b.Desc.p, dp(b.Ones), dp(b.Zeros), dp(b.Mean), dp(b.Var), C.double(eps), dp(b.SaveMean), dp(b.SaveInvStd)))
}

// BatchNormBackward computes dx from x, dy and the statistics the forward
// pass saved in b.
func (n *DNN) BatchNormBackward(x *TensorDesc, xp DevicePtr, dy *TensorDesc, dyp DevicePtr, dx *TensorDesc, dxp DevicePtr, b *BatchNormBuffers, eps float64) error {
	return dnnError("cudnnBatchNormalizationBackward", C.gc_dnn_bn_backward(n.dev.ctx, n.h, dbl(x.Type),
		x.p, dp(xp), dy.p, dp(dyp), dx.p, dp(dxp), b.Desc.p, dp(b.Ones), dp(b.DScale), dp(b.DBias), C.double(eps), dp(b.SaveMean), dp(b.SaveInvStd)))
}
