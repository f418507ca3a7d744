package vision

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "Pooling",
		BackwardReads: poolingBackwardReads,
		New32:         newPooling[float32], New64: newPooling[float64],
		EngineField: func(p *caffepb.LayerParameter) layer.EngineName {
			return layer.EngineName(p.GetPoolingParam().GetEngine())
		},
		Engines:   []layer.EngineDef{layer.GPUEngine(newPoolingGPU[float32], newPoolingGPU[float64]), layer.CuDNNEngine(true, acceptsPoolDNN, newPoolingDNN[float32], newPoolingDNN[float64])},
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Pooling reduces each kernel_h x kernel_w window of every channel plane of
// a 4-D (num, channels, height, width) bottom to one value:
//
//   - MAX: the window's maximum (the first one, in row-major order, on
//     ties); a second top, if given, receives the argmax as a float index
//     h*width + w within the plane (Caffe's mask top).
//   - AVE: the sum over the window clipped to the image divided by the
//     window's size clipped only to the padded image, so padding counts.
//   - STOCHASTIC: in TRAIN an element drawn with probability proportional
//     to its (non-negative) value; in TEST sum(x^2) / sum(x).
//
// The output size is ceil((in + 2*pad - kernel) / stride) + 1 (floor with
// round_mode FLOOR), less one where padding would make the last window
// start beyond the image and its left padding. global_pooling makes the
// kernel the whole plane.
type poolingLayer[T layer.Float] struct {
	layer.Base[T]
	method caffepb.PoolingParameter_PoolMethod
	global bool
	ceil   bool
	poolGeom
	// geomArgs is poolGeom packed for the kernels (pooling_gpu.go).
	geomArgs [poolGeomInts]int32
	// mask holds MAX's argmax when there is no mask top.
	mask *blob.Blob[T]
	// sample holds STOCHASTIC's per-output state: in TRAIN the uniform
	// draw, which forward replaces by the sampled index; in TEST the
	// window's sum, which backward needs.
	sample *blob.Blob[T]

	// The host's MAX and AVE passes, planes spread over the cores: the
	// pass in progress and the part bodies, made once.
	x, y, idx, dx, dy         []T
	forwardPart, backwardPart func(part, lo, hi int)

	// inferOnly: MAX with no mask top keeps no argmax
	// (layer.InferenceOnly), and pools by mathfn.MaxPoolValues, with
	// windows and a scratch per part of the pass.
	inferOnly bool
	windows   mathfn.PoolWindows
	scratch   [][]T
}

// SetInferenceOnly lets a MAX pass without a mask top skip the argmax
// (layer.InferenceOnly): it then pools by separable vector maxima, which
// on GoogLeNet at batch 1 (a 2-vCPU AVX2 machine, where the window loop
// has no vector form) took the pooling from 38% of the pass's CPU time to
// 10%, the pass from 93-105 ms to 76.
func (l *poolingLayer[T]) SetInferenceOnly(on bool) { l.inferOnly = on }

// valuesOnly reports whether this MAX pass keeps no argmax.
func (l *poolingLayer[T]) valuesOnly(top []*blob.Blob[T]) bool {
	return l.inferOnly && l.method == caffepb.PoolingParameter_MAX && len(top) == 1
}

// poolGeom is the pooling geometry of one bottom shape.
type poolGeom struct {
	num, channels, height, width int
	pooledH, pooledW             int
	kernelH, kernelW             int
	strideH, strideW             int
	padH, padW                   int
	// offsets are the positions of a window's elements relative to its
	// first, in row-major order, for windows wholly inside the image.
	offsets []int32
}

// poolGeomInts is the number of ints the kernels' struct PoolGeom holds.
const poolGeomInts = 11

func newPooling[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &poolingLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	if err := l.readParam(p.GetPoolingParam()); err != nil {
		return nil, err
	}
	return l, nil
}

// readParam reads and checks pooling_param; the kernel of global pooling
// waits for the bottom's shape.
func (l *poolingLayer[T]) readParam(pp *caffepb.PoolingParameter) error {
	if pp == nil { // no pooling_param: the kernel size is missing, said below
		pp = &caffepb.PoolingParameter{}
	}
	l.method, l.global = pp.GetPool(), pp.GetGlobalPooling()
	switch l.method {
	case caffepb.PoolingParameter_MAX, caffepb.PoolingParameter_AVE, caffepb.PoolingParameter_STOCHASTIC:
	default:
		return fmt.Errorf("unknown pooling method %v", l.method)
	}
	switch pp.GetRoundMode() {
	case caffepb.PoolingParameter_CEIL:
		l.ceil = true
	case caffepb.PoolingParameter_FLOOR:
	default:
		return fmt.Errorf("unknown rounding mode %v", pp.GetRoundMode())
	}
	if pp.CeilMode != nil { // the forks' boolean spelling of round_mode
		if pp.RoundMode != nil && pp.GetCeilMode() != l.ceil {
			return fmt.Errorf("ceil_mode: %v contradicts round_mode: %v", pp.GetCeilMode(), pp.GetRoundMode())
		}
		l.ceil = pp.GetCeilMode()
	}
	var err error
	if l.global {
		if pp.KernelSize != nil || pp.KernelH != nil || pp.KernelW != nil {
			return errors.New("with global_pooling: true, the filter size cannot be specified")
		}
	} else if l.kernelH, l.kernelW, err = sizePair("kernel_size", "kernel", pp.KernelSize, pp.KernelH, pp.KernelW, -1); err != nil {
		return err
	}
	if l.padH, l.padW, err = sizePair("pad", "pad", pp.Pad, pp.PadH, pp.PadW, 0); err != nil {
		return err
	}
	if l.strideH, l.strideW, err = sizePair("stride", "stride", pp.Stride, pp.StrideH, pp.StrideW, 1); err != nil {
		return err
	}
	if l.strideH <= 0 || l.strideW <= 0 {
		return fmt.Errorf("stride must be positive, got %d x %d", l.strideH, l.strideW)
	}
	if l.global {
		if l.padH != 0 || l.padW != 0 || l.strideH != 1 || l.strideW != 1 {
			return fmt.Errorf("with global_pooling: true, only pad = 0 and stride = 1 are allowed, got pad %d x %d and stride %d x %d",
				l.padH, l.padW, l.strideH, l.strideW)
		}
		return nil
	}
	return l.checkKernel()
}

// checkKernel checks the kernel against the padding (known once the
// kernel is).
func (l *poolingLayer[T]) checkKernel() error {
	if l.kernelH <= 0 || l.kernelW <= 0 {
		return fmt.Errorf("filter dimensions cannot be zero: kernel %d x %d", l.kernelH, l.kernelW)
	}
	if l.padH == 0 && l.padW == 0 {
		return nil
	}
	if l.method == caffepb.PoolingParameter_STOCHASTIC {
		return errors.New("padding is implemented only for average and max pooling")
	}
	if l.padH >= l.kernelH || l.padW >= l.kernelW {
		return fmt.Errorf("pad %d x %d must be smaller than the kernel %d x %d", l.padH, l.padW, l.kernelH, l.kernelW)
	}
	return nil
}

// sizePair reads one of pooling's 2-D sizes: the square field or both of
// the _h/_w fields, never both forms. def < 0 means the size is required.
func sizePair(name, hw string, square, h, w *uint32, def int) (int, int, error) {
	switch {
	case square != nil && (h != nil || w != nil):
		return 0, 0, fmt.Errorf("%s is %s OR %s_h and %s_w; not both", hw, name, hw, hw)
	case square != nil:
		return int(*square), int(*square), nil
	case h != nil && w != nil:
		return int(*h), int(*w), nil
	case h != nil || w != nil:
		return 0, 0, fmt.Errorf("for non-square %ss both %s_h and %s_w are required", hw, hw, hw)
	case def < 0:
		return 0, 0, fmt.Errorf("%s (or %s_h and %s_w) must be specified", name, hw, hw)
	}
	return def, def, nil
}

// Type returns "Pooling".
func (*poolingLayer[T]) Type() string { return "Pooling" }

// Counts returns one bottom and one top, or two tops (the mask) for MAX.
func (l *poolingLayer[T]) Counts() layer.BlobCounts {
	if l.method == caffepb.PoolingParameter_MAX {
		return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Between(1, 2)}
	}
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp creates the internal index buffers.
func (l *poolingLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	var err error
	switch {
	case l.method == caffepb.PoolingParameter_MAX && len(top) == 1:
		l.mask, err = l.NewBlob()
	case l.method == caffepb.PoolingParameter_STOCHASTIC:
		l.sample, err = l.NewBlob()
	}
	return err
}

// Reshape computes the output size and sizes the tops and buffers.
func (l *poolingLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	b := bottom[0]
	if b.NumAxes() != 4 {
		return fmt.Errorf("input must have 4 axes, corresponding to (num, channels, height, width), got %s", b.ShapeString())
	}
	s := b.Shape()
	l.num, l.channels, l.height, l.width = s[0], s[1], s[2], s[3]
	if l.global {
		l.kernelH, l.kernelW = l.height, l.width
		if err := l.checkKernel(); err != nil {
			return err
		}
	}
	var err error
	padded := l.padH > 0 || l.padW > 0
	if l.pooledH, err = pooledSize("height", l.height, l.kernelH, l.padH, l.strideH, l.ceil, padded); err != nil {
		return err
	}
	if l.pooledW, err = pooledSize("width", l.width, l.kernelW, l.padW, l.strideW, l.ceil, padded); err != nil {
		return err
	}
	if err := l.checkIndexable(); err != nil {
		return err
	}
	l.geomArgs = l.poolGeom.pack()
	l.setOffsets()
	if err := top[0].Reshape4(l.num, l.channels, l.pooledH, l.pooledW); err != nil {
		return err
	}
	for _, b := range [...]*blob.Blob[T]{l.indexBlob(top), l.sample} {
		if b != nil {
			if err := b.ReshapeLike(top[0]); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkIndexable refuses planes whose offsets T cannot hold exactly: MAX
// and STOCHASTIC keep indices in blobs of T, and a float32 holds every
// integer only up to 2^24.
func (l *poolingLayer[T]) checkIndexable() error {
	var zero T
	if _, ok := any(zero).(float32); !ok || l.method == caffepb.PoolingParameter_AVE || l.height*l.width <= 1<<24 {
		return nil
	}
	return fmt.Errorf("a %d x %d plane has more elements than float32 indices can address (2^24)", l.height, l.width)
}

// pooledSize is the number of windows along one axis. padded says whether
// either axis is padded: Caffe then drops a last window that would start
// past the image and its left padding, on both axes (an axis of pad 0
// too); with no padding at all it keeps such a window, which covers no
// pixel (MAX gives -FLT_MAX there, AVE 0).
func pooledSize(axis string, in, kernel, pad, stride int, ceil, padded bool) (int, error) {
	span := in + 2*pad - kernel
	q := span / stride // rounds towards zero
	if q*stride != span {
		switch {
		case span < 0 && !ceil:
			q--
		case span > 0 && ceil:
			q++
		}
	}
	out := q + 1
	if padded && (out-1)*stride >= in+pad {
		out--
	}
	if out < 1 {
		return 0, fmt.Errorf("kernel %d with pad %d and stride %d leaves no output for input %s %d", kernel, pad, stride, axis, in)
	}
	return out, nil
}

// setOffsets fills offsets for the current kernel and width, reusing its
// array (Reshape runs on every forward).
func (g *poolGeom) setOffsets() {
	g.offsets = g.offsets[:0]
	for r := range g.kernelH {
		for c := range g.kernelW {
			g.offsets = append(g.offsets, int32(r*g.width+c))
		}
	}
}

// insideCols returns the outputs [lo, hi) of a row whose windows lie
// wholly inside the image's columns.
func (g *poolGeom) insideCols() (lo, hi int) {
	lo = (g.padW + g.strideW - 1) / g.strideW // the first with w0 >= 0
	if span := g.width - g.kernelW + g.padW; span >= 0 {
		hi = span/g.strideW + 1 // the last with w0 + kernelW <= width, plus one
	}
	return min(lo, g.pooledW), min(max(hi, lo), g.pooledW)
}

// pack lays the geometry out as the kernels' struct PoolGeom.
func (g *poolGeom) pack() [poolGeomInts]int32 {
	return [poolGeomInts]int32{
		int32(g.channels), int32(g.height), int32(g.width), int32(g.pooledH), int32(g.pooledW),
		int32(g.kernelH), int32(g.kernelW), int32(g.strideH), int32(g.strideW), int32(g.padH), int32(g.padW),
	}
}

// window returns the rows [h0, h1) and columns [w0, w1) of output (ph, pw)
// clipped to the image, and the size of the window clipped only to the
// padded image (AVE's divisor). A window may be empty when the stride
// exceeds the kernel without padding.
func (g *poolGeom) window(ph, pw int) (h0, h1, w0, w1, size int) {
	h0, w0 = ph*g.strideH-g.padH, pw*g.strideW-g.padW
	h1, w1 = min(h0+g.kernelH, g.height+g.padH), min(w0+g.kernelW, g.width+g.padW)
	size = (h1 - h0) * (w1 - w0)
	return max(h0, 0), min(h1, g.height), max(w0, 0), min(w1, g.width), size
}

// planes returns the number of channel planes and the elements of one
// bottom and one top plane.
func (g *poolGeom) planes() (n, in, out int) {
	return g.num * g.channels, g.height * g.width, g.pooledH * g.pooledW
}

// ForwardCPU pools every window.
func (l *poolingLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	switch l.method {
	case caffepb.PoolingParameter_MAX, caffepb.PoolingParameter_AVE:
		l.x, l.y = x, y
		n, _, _ := l.planes()
		if l.valuesOnly(top) || l.method == caffepb.PoolingParameter_MAX && l.argByValue() {
			g := &l.poolGeom
			l.windows = mathfn.PoolWindows{H: g.height, W: g.width, OutH: g.pooledH, OutW: g.pooledW,
				KernelH: g.kernelH, KernelW: g.kernelW, StrideH: g.strideH, StrideW: g.strideW, PadH: g.padH, PadW: g.padW}
			for len(l.scratch) < mathfn.Parts(n) {
				l.scratch = append(l.scratch, nil)
			}
			for p := range mathfn.Parts(n) {
				l.scratch[p] = kit.Grow(l.scratch[p], l.windows.MaxPoolScratch())
			}
		}
		if !l.valuesOnly(top) && l.method == caffepb.PoolingParameter_MAX {
			l.idx = l.indexBlob(top).MutableCPUData()
		}
		if l.forwardPart == nil {
			l.forwardPart, l.backwardPart = l.forwardPlanes, l.backwardPlanes
		}
		// Plane by plane, in chunks a late helper leaves to the others.
		mathfn.ParallelChunks(n, l.forwardPart)
		l.x, l.y, l.idx = nil, nil, nil
	case caffepb.PoolingParameter_STOCHASTIC:
		s := l.sample.MutableCPUData()
		if l.Phase() == caffepb.Phase_TRAIN {
			mathfn.RngUniform(len(s), 0, 1, s, l.RNG())
			stoPoolForwardTrain(&l.poolGeom, x, y, s)
		} else {
			stoPoolForwardTest(&l.poolGeom, x, y, s)
		}
	}
	return nil
}

// indexBlob is where MAX keeps its argmax: the mask top if there is one.
func (l *poolingLayer[T]) indexBlob(top []*blob.Blob[T]) *blob.Blob[T] {
	if len(top) > 1 {
		return top[1]
	}
	return l.mask
}

// poolWindow is one output of one plane: where the plane starts in the
// bottom (in), the output's index in the top (out), and its window as
// poolGeom.window gives it.
type poolWindow struct {
	in, out              int
	h0, h1, w0, w1, size int
}

// eachWindow calls f for every output of every plane, in top order. (A
// callback, not an iterator: a returned iterator would be allocated on
// every Forward.)
func (g *poolGeom) eachWindow(f func(w poolWindow)) {
	n, in, out := g.planes()
	for p := range n {
		for ph := range g.pooledH {
			for pw := range g.pooledW {
				h0, h1, w0, w1, size := g.window(ph, pw)
				if h0 >= h1 || w0 >= w1 {
					h1, w1 = h0, w0 // empty: no row for the callers to slice
				}
				f(poolWindow{in: p * in, out: p*out + ph*g.pooledW + pw, h0: h0, h1: h1, w0: w0, w1: w1, size: size})
			}
		}
	}
}

// windowSum is the sum of x over the window w of a plane width wide.
func windowSum[T layer.Float](x []T, width int, w poolWindow) T {
	var sum T
	for h := w.h0; h < w.h1; h++ {
		for _, v := range x[w.in+h*width+w.w0 : w.in+h*width+w.w1] {
			sum += v
		}
	}
	return sum
}

// forwardPlanes pools planes [lo, hi) of a MAX or AVE pass.
func (l *poolingLayer[T]) forwardPlanes(part, lo, hi int) {
	g := &l.poolGeom
	_, in, out := g.planes()
	if g3, ok := l.pool3s2(); ok {
		x, y := asFloat32(l.x[lo*in:hi*in]), asFloat32(l.y[lo*out:hi*out])
		switch {
		case l.method == caffepb.PoolingParameter_AVE && mathfn.AvePool3x3S2(g3, hi-lo, x, y):
			return
		case l.method == caffepb.PoolingParameter_MAX && l.idx != nil &&
			maxPool3s2(g, g3, hi-lo, x, y, asFloat32(l.idx[lo*out:hi*out])):
			return
		}
	}
	for p := lo; p < hi; p++ {
		x, y := l.x[p*in:(p+1)*in], l.y[p*out:(p+1)*out]
		if l.method == caffepb.PoolingParameter_MAX && l.idx == nil {
			maxPoolValues(g, &l.windows, x, y, l.scratch[part])
			continue
		}
		if l.method == caffepb.PoolingParameter_MAX && l.argByValue() {
			maxPoolArgByValue(g, &l.windows, x, y, l.idx[p*out:(p+1)*out], l.scratch[part])
		} else if l.method == caffepb.PoolingParameter_MAX {
			maxPoolPlane(g, x, y, l.idx[p*out:(p+1)*out])
		} else {
			avePoolPlane(g, x, y)
		}
	}
}

// pool3s2 says whether the pass is a float32 3x3 pooling of stride 2
// without padding, which mathfn's vector kernels take a row of sixteen
// windows at a time (CIFAR-10 quick's three pools; its pool1 at batch 100
// on the 2-vCPU Zen 4 EPYC: 4.8 ms a pass one window at a time or
// sixteen gathered ones, 0.9 ms), and its geometry.
func (l *poolingLayer[T]) pool3s2() (mathfn.Pool3x3S2, bool) {
	g := &l.poolGeom
	var zero T
	ok := unsafe.Sizeof(zero) == 4 && g.kernelH == 3 && g.kernelW == 3 && g.strideH == 2 && g.strideW == 2 &&
		g.padH == 0 && g.padW == 0
	return mathfn.Pool3x3S2{H: g.height, W: g.width, OutH: g.pooledH, OutW: g.pooledW}, ok
}

// maxPool3s2 pools n planes with mathfn.MaxPool3x3S2, reporting whether
// it ran, and redoes by maxPoolResult the windows it finds no value above
// -FLT_MAX in (index -1), as maxPoolPlane does.
func maxPool3s2(g *poolGeom, g3 mathfn.Pool3x3S2, n int, x, y, idx []float32) bool {
	if !mathfn.MaxPool3x3S2(g3, n, x, y, idx) {
		return false
	}
	if !holdsFloor(y) {
		return true
	}
	_, in, out := g.planes()
	for o, i := range idx[:n*out] {
		if i < 0 {
			p, q := o/out, o%out
			y[o], idx[o] = maxPoolResult(g, x[p*in:(p+1)*in], -1, q/g.pooledW, q%g.pooledW)
		}
	}
	return true
}

// maxPoolValues writes each window's maximum for one plane, with no
// index: mathfn.MaxPoolValues, and Caffe's loop (maxPoolWindow) for the
// windows it leaves at -FLT_MAX (no value above it: empty, all NaN or
// -Inf), so that those give what the indexed pass gives.
func maxPoolValues[T layer.Float](g *poolGeom, w *mathfn.PoolWindows, x, y, scratch []T) {
	mathfn.MaxPoolValues(w, x, y, scratch)
	if !holdsFloor(y) {
		return
	}
	floor := T(-math.MaxFloat32)
	for o, v := range y {
		if v != floor {
			continue
		}
		data := unsafe.Pointer(unsafe.SliceData(x))
		if unsafe.Sizeof(x[0]) == 8 {
			y[o], _ = maxPoolWindow(g, unsafe.Slice((*int64)(data), len(x)), x, o/g.pooledW, o%g.pooledW)
		} else {
			y[o], _ = maxPoolWindow(g, unsafe.Slice((*int32)(data), len(x)), x, o/g.pooledW, o%g.pooledW)
		}
	}
}

// holdsFloor reports whether y may hold -MaxFloat32: of float32 values,
// whether one does, looked for two at a time in 64-bit words (a 32-bit
// lane of y xor the floor's bits that is zero); of float64 values, true.
// A loop comparing value by value took a quarter of GoogLeNet's
// inception pools' time, as long as their vector maxima.
func holdsFloor[T layer.Float](y []T) bool {
	if unsafe.Sizeof(y[0]) != 4 {
		return true
	}
	const floor = 0xff7fffff // -MaxFloat32's bits
	const pair = floor<<32 | floor
	const ones, highs = 0x0000000100000001, 0x8000000080000000
	is := func(v T) bool { return math.Float32bits(float32(v)) == floor }
	if len(y) > 0 && uintptr(unsafe.Pointer(&y[0]))%8 != 0 {
		// The words from an 8-byte boundary (a plane of 7x7 starts
		// at every other one).
		if is(y[0]) {
			return true
		}
		y = y[1:]
	}
	words := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(y))), len(y)/2)
	var hit uint64
	for _, w := range words {
		d := w ^ pair
		hit |= (d - ones) &^ d & highs
	}
	return hit != 0 || len(y)%2 == 1 && is(y[len(y)-1])
}

// argByValue says whether the indexed MAX pass takes each window's
// maximum from the vector kernels of the values-only pass and then its
// index by looking for it: float32 where the one-pass indexed kernel
// (maxPoolRun, AVX-512) is missing. CIFAR-10 quick's pool1 at batch 100
// on two AVX2 cores: 19.7 ms a pass by keys, 9.2 ms by value.
func (l *poolingLayer[T]) argByValue() bool {
	var zero T
	return unsafe.Sizeof(zero) == 4 && !mathfn.HasMaxPoolRun()
}

// maxPoolArgByValue writes each window's maximum and its index for one
// plane: the maxima from maxPoolValues, each index the first position in
// the window holding that value (Caffe's first largest; -0 and +0 are
// equal there as here), each maximum that position's value. A window whose maximum is NaN or -FLT_MAX (empty,
// all NaN, only -Inf) goes to maxPoolWindow, Caffe's loop.
func maxPoolArgByValue[T layer.Float](g *poolGeom, w *mathfn.PoolWindows, x, y, idx, scratch []T) {
	maxPoolValues(g, w, x, y, scratch)
	floor := T(-math.MaxFloat32)
	bits := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
	// Windows wholly inside the image look for their maximum at the fixed
	// offsets of g.offsets (row-major, as firstEqual's order) from their
	// first element, with no clipping per window: window and firstEqual
	// cost CIFAR-10 quick's pool1 three quarters of its 9 ms a pass on two
	// AVX2 cores, for 9 compares at most per output.
	cLo, cHi := g.insideCols()
	offs := g.offsets
	if len(offs) != g.kernelH*g.kernelW {
		cLo, cHi = 0, 0 // not set up: every window clipped
	}
	for ph := range g.pooledH {
		h0 := ph*g.strideH - g.padH
		lo, hi := cLo, cHi
		if h0 < 0 || h0+g.kernelH > g.height {
			lo, hi = 0, 0
		}
		ys, is := y[ph*g.pooledW:(ph+1)*g.pooledW], idx[ph*g.pooledW:(ph+1)*g.pooledW]
		for pw, v := range ys {
			if v != v || v == floor {
				ys[pw], is[pw] = maxPoolWindow(g, bits, x, ph, pw)
				continue
			}
			i := -1
			if pw >= lo && pw < hi {
				first := h0*g.width + pw*g.strideW - g.padW
				for _, off := range offs {
					if x[first+int(off)] == v {
						i = first + int(off)
						break
					}
				}
			} else {
				wh0, wh1, w0, w1, _ := g.window(ph, pw)
				i = firstEqual(x, g.width, wh0, wh1, w0, w1, v)
			}
			if i < 0 {
				panic("vision: a window's maximum is not in the window")
			}
			// x[i]'s own bits: the vector maximum of -0 and +0 may have
			// either sign.
			ys[pw], is[pw] = x[i], T(i)
		}
	}
}

// firstEqual returns the first position of the window holding v, which
// it holds.
func firstEqual[T layer.Float](x []T, width, h0, h1, w0, w1 int, v T) int {
	for h := h0; h < h1; h++ {
		at := h*width + w0
		for c, u := range x[at : at+w1-w0] {
			if u == v {
				return at + c
			}
		}
	}
	panic("vision: a window's maximum is not in the window")
}

// maxPoolPlane writes each window's maximum and its index, for one plane.
// NaNs are skipped unless the whole window is NaN; an empty window gives
// -FLT_MAX and index -1, as in Caffe.
func maxPoolPlane[T layer.Float](g *poolGeom, x, y, idx []T) {
	data := unsafe.Pointer(unsafe.SliceData(x))
	if unsafe.Sizeof(x[0]) == 8 {
		maxPoolBits(g, unsafe.Slice((*int64)(data), len(x)), x, y, idx)
		return
	}
	bits := unsafe.Slice((*int32)(data), len(x))
	if mathfn.HasMaxPoolRun() && len(g.offsets) > 1 && g.pooledH*g.pooledW >= 4 {
		maxPoolVector(g, bits, asFloat32(x), asFloat32(y), asFloat32(idx))
		return
	}
	maxPoolBits(g, bits, x, y, idx)
}

// maxPoolBits is maxPoolPlane reading the plane's values as their bits
// (bits and x are one array), compared by orderKey: integers, whose
// comparison compiles to conditional moves where that of floats is a
// branch, mispredicted about once a window on data like a convolution's
// output (CIFAR-10 quick's pool1 at batch 100 on random data: 12.4 ms
// with float comparisons, 8.7 ms).
func maxPoolBits[B int32 | int64, T layer.Float](g *poolGeom, bits []B, x, y, idx []T) {
	for ph := range g.pooledH {
		for pw := range g.pooledW {
			o := ph*g.pooledW + pw
			y[o], idx[o] = maxPoolWindow(g, bits, x, ph, pw)
		}
	}
}

// maxPoolWindow is the maximum of output (ph, pw)'s window and its
// position.
func maxPoolWindow[B int32 | int64, T layer.Float](g *poolGeom, bits []B, x []T, ph, pw int) (T, T) {
	h0, h1, w0, w1, _ := g.window(ph, pw)
	arg := windowArgMax(bits, g.width, h0, h1, w0, w1, orderKey(floatBits[B](-math.MaxFloat32)))
	return maxPoolResult(g, x, arg, ph, pw)
}

// maxPoolResult turns a window's argmax by key into its value and index,
// going back to Caffe's loop where keys cannot decide: no value above
// -FLT_MAX (arg < 0), or a NaN among the largest (NaNs order above +Inf
// or below -Inf as keys but are never larger as floats).
func maxPoolResult[T layer.Float](g *poolGeom, x []T, arg, ph, pw int) (T, T) {
	if arg >= 0 {
		if v := x[arg]; v == v {
			return v, T(arg)
		}
	}
	h0, h1, w0, w1, _ := g.window(ph, pw)
	v, arg := maxPoolRare(g, x, h0, h1, w0, w1)
	return v, T(arg)
}

// maxPoolVector is maxPoolBits for float32 with runs of up to sixteen
// consecutive outputs whose windows lie inside the image's columns pooled
// at once by maxPoolRun (one vector lane a window; LeNet's pool1 at batch
// 64: 1.8 ms a pass with one window at a time, ... ms). A row of windows
// that the image clips at the top or bottom (a padded pool's first and
// last rows) runs with the offsets of the kernel rows inside the image
// alone, in the same row-major order: GoogLeNet's 3x3 stride-1 pools of
// 14x14 planes have a quarter of their windows on the border. Windows the
// image clips at the sides go one at a time.
func maxPoolVector(g *poolGeom, bits []int32, x, y, idx []float32) {
	var run poolRun
	lo, hi := g.insideCols()
	kw := g.kernelW
	for ph := range g.pooledH {
		h0 := ph*g.strideH - g.padH
		rTop, rBot := max(-h0, 0), min(g.kernelH, g.height-h0) // the kernel rows inside
		first, last := lo, hi
		if rBot <= rTop {
			first, last = g.pooledW, g.pooledW // empty windows: Caffe's loop
		}
		// A row of windows clipped otherwise than the last takes other
		// offsets: the kernel rows inside, not only their number, must
		// match (a pad that clips the first row's top and the last row's
		// bottom by as many rows leaves runs of the same length).
		if rows := [2]int{rTop, max(rBot, rTop)}; rows != run.rows || run.offs == nil {
			run.flush(g, bits, x, y, idx)
			run.rows, run.offs = rows, g.offsets[rows[0]*kw:rows[1]*kw]
		}
		for pw := range g.pooledW {
			if pw < first || pw >= last {
				run.flush(g, bits, x, y, idx)
				o := ph*g.pooledW + pw
				y[o], idx[o] = maxPoolWindow(g, bits, x, ph, pw)
				continue
			}
			if run.n == 0 {
				run.out = ph*g.pooledW + pw
			}
			// The unclipped window's start (before the plane where the
			// top rows are clipped): the offsets of the rows inside
			// reach into the plane from it.
			run.starts[run.n] = int32(h0*g.width + pw*g.strideW - g.padW)
			if run.n++; run.n == len(run.starts) {
				run.flush(g, bits, x, y, idx)
			}
		}
	}
	run.flush(g, bits, x, y, idx)
}

// asFloat32 is s, whose elements are float32, as a []float32.
func asFloat32[T layer.Float](s []T) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// poolRun gathers windows for maxPoolRun: the first output, each
// window's first position, and the offsets of the window's elements from
// it (g.offsets, or the rows of them inside the image).
type poolRun struct {
	starts [16]int32
	out, n int
	rows   [2]int // the kernel rows [rows[0], rows[1]) that offs holds
	offs   []int32
}

// flush pools the gathered windows of plane x (bits is x's memory) into
// ys and is, and empties the run.
func (r *poolRun) flush(g *poolGeom, bits []int32, x, ys, is []float32) {
	if r.n == 0 {
		return
	}
	var rare uint16
	// Windows one or two positions apart (a stride of 1 or 2 within a
	// row: the starts rise by the stride, so the span tells) are read
	// with loads, not gathers. GoogLeNet's inception pools at batch 8 on
	// two Zen 4 cores spent 6% of the training pass in the gathers.
	switch mask, span := uint16(1)<<r.n-1, r.starts[r.n-1]-r.starts[0]; {
	case span == int32(r.n-1):
		rare = mathfn.MaxPoolRow(bits, r.offs, r.starts[0], mask, ys[r.out:], is[r.out:])
	case g.strideW == 2 && span == int32(2*(r.n-1)):
		rare = mathfn.MaxPoolRow2(bits, r.offs, r.starts[0], mask, ys[r.out:], is[r.out:])
	default:
		rare = mathfn.MaxPoolRun(bits, r.offs, &r.starts, mask, ys[r.out:], is[r.out:])
	}
	for j := 0; rare != 0; j, rare = j+1, rare>>1 {
		if rare&1 != 0 {
			o := r.out + j
			ys[o], is[o] = maxPoolResult(g, x, -1, o/g.pooledW, o%g.pooledW)
		}
	}
	r.n = 0
}

// windowArgMax returns the index of the first largest value of the window
// by key, or -1 if none is above floor. (A function of its own, not
// inlined: in the loop over windows its values spilled to the stack on
// every element.)
//
//go:noinline
func windowArgMax[B int32 | int64](bits []B, width, h0, h1, w0, w1 int, floor B) int {
	best, arg := floor, -1
	n := max(w1-w0, 0)
	for h := h0; h < h1; h++ {
		at := h*width + w0
		for c, b := range bits[at : at+n] {
			k := orderKey(b)
			larger := -kit.Btoi(k > best) // all ones when it is
			arg ^= (arg ^ (at + c)) & larger
			best = max(best, k)
		}
	}
	return arg
}

// floatBits returns the bits of v as a float of B's size.
func floatBits[B int32 | int64](v float64) B {
	if unsafe.Sizeof(B(0)) == 4 {
		return B(int32(math.Float32bits(float32(v))))
	}
	return B(int64(math.Float64bits(v)))
}

// orderKey maps a float's bits to an integer in the floats' order: the
// bits of a positive value, the negated magnitude of a negative one (so
// -0 and +0 are equal, as floats). NaNs come above +Inf or below -Inf by
// their sign.
func orderKey[B int32 | int64](b B) B {
	sign := b >> (8*unsafe.Sizeof(b) - 1)
	return ((b &^ (B(1) << (8*unsafe.Sizeof(b) - 1))) ^ sign) - sign
}

// maxPoolRare is a window's maximum as Caffe finds it, for the windows
// where no value exceeds -FLT_MAX or a NaN is among the largest keys: the
// first value above -FLT_MAX (NaNs never are), else the first value,
// replaced by any larger one and any after a NaN.
func maxPoolRare[T layer.Float](g *poolGeom, x []T, h0, h1, w0, w1 int) (T, int) {
	best, arg := T(-math.MaxFloat32), -1
	for h := h0; h < h1; h++ {
		for c := w0; c < w1; c++ {
			if v := x[h*g.width+c]; v > best {
				best, arg = v, h*g.width+c
			}
		}
	}
	if arg >= 0 {
		return best, arg
	}
	for h := h0; h < h1; h++ {
		for c := w0; c < w1; c++ {
			if v := x[h*g.width+c]; arg < 0 || v > best || math.IsNaN(float64(best)) {
				best, arg = v, h*g.width+c
			}
		}
	}
	return best, arg
}

// avePoolPlane writes each window's sum divided by its padded size, for
// one plane.
func avePoolPlane[T layer.Float](g *poolGeom, x, y []T) {
	for ph := range g.pooledH {
		for pw := range g.pooledW {
			h0, h1, w0, w1, size := g.window(ph, pw)
			if h0 >= h1 || w0 >= w1 {
				y[ph*g.pooledW+pw] = 0 // an empty window averages to 0
				continue
			}
			var sum T
			for h := h0; h < h1; h++ {
				for _, v := range x[h*g.width+w0 : h*g.width+w1] {
					sum += v
				}
			}
			y[ph*g.pooledW+pw] = sum / T(size)
		}
	}
}

// stoPoolForwardTrain samples one element of each window: the first whose
// running sum reaches u times the window's sum, u being the uniform draw
// in s, which it replaces by the sampled index (-1 for an empty window).
func stoPoolForwardTrain[T layer.Float](g *poolGeom, x, y, s []T) {
	g.eachWindow(func(w poolWindow) {
		xp := x[w.in:]
		arg := sampleWindow(xp, g.width, w.h0, w.h1, w.w0, w.w1, s[w.out]*windowSum(x, g.width, w))
		y[w.out], s[w.out] = 0, T(arg)
		if arg >= 0 {
			y[w.out] = xp[arg]
		}
	})
}

// sampleWindow returns the index of the first element of the window whose
// running sum reaches thres, the last element if rounding lets none reach
// it, or -1 for an empty window.
func sampleWindow[T layer.Float](xp []T, width, h0, h1, w0, w1 int, thres T) int {
	var cum T
	arg := -1
	for h := h0; h < h1; h++ {
		for w := w0; w < w1; w++ {
			arg = h*width + w
			if cum += xp[arg]; cum >= thres {
				return arg
			}
		}
	}
	return arg
}

// stoPoolForwardTest writes sum(x^2) / sum(x) for each window, the sum
// starting at FLT_MIN as in Caffe so that an all-zero window gives 0, and
// keeps that sum in s for backward.
func stoPoolForwardTest[T layer.Float](g *poolGeom, x, y, s []T) {
	g.eachWindow(func(w poolWindow) {
		sum, sq := T(kit.FltMin), T(0)
		for h := w.h0; h < w.h1; h++ {
			for _, v := range x[w.in+h*g.width+w.w0 : w.in+h*g.width+w.w1] {
				sum += v
				sq += v * v
			}
		}
		y[w.out], s[w.out] = sq/sum, sum
	})
}

// BackwardCPU routes the gradient: MAX and STOCHASTIC (TRAIN) to the
// recorded index, AVE spread over the window, STOCHASTIC (TEST) through
// the derivative of sum(x^2)/sum(x).
func (l *poolingLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	dy, dx := top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	switch l.method {
	case caffepb.PoolingParameter_MAX, caffepb.PoolingParameter_AVE:
		l.dy, l.dx = dy, dx
		if l.method == caffepb.PoolingParameter_MAX {
			l.idx = l.indexBlob(top).CPUData()
		}
		if l.forwardPart == nil {
			l.forwardPart, l.backwardPart = l.forwardPlanes, l.backwardPlanes
		}
		n, _, _ := l.planes()
		mathfn.Parallel(n, l.backwardPart)
		l.dy, l.dx, l.idx = nil, nil, nil
		return nil
	}
	clear(dx)
	switch l.method {
	case caffepb.PoolingParameter_STOCHASTIC:
		if l.Phase() == caffepb.Phase_TRAIN {
			indexPoolBackward(&l.poolGeom, dy, l.sample.CPUData(), dx)
		} else {
			stoPoolBackwardTest(&l.poolGeom, dy, bottom[0].CPUData(), top[0].CPUData(), l.sample.CPUData(), dx)
		}
	}
	return nil
}

// backwardPlanes routes the gradients of planes [lo, hi) of a MAX or AVE
// pass.
func (l *poolingLayer[T]) backwardPlanes(part, lo, hi int) {
	g := &l.poolGeom
	_, in, out := g.planes()
	if g3, ok := l.pool3s2(); ok {
		dy, dx := asFloat32(l.dy[lo*out:hi*out]), asFloat32(l.dx[lo*in:hi*in])
		switch {
		case l.method == caffepb.PoolingParameter_AVE && mathfn.AvePool3x3S2Back(g3, hi-lo, dy, dx):
			return
		case l.method == caffepb.PoolingParameter_MAX && mathfn.MaxPool3x3S2Back(g3, hi-lo, dy, asFloat32(l.idx[lo*out:hi*out]), dx):
			return
		}
	}
	for p := lo; p < hi; p++ {
		dx, dy := l.dx[p*in:(p+1)*in], l.dy[p*out:(p+1)*out]
		clear(dx)
		if l.method == caffepb.PoolingParameter_MAX {
			for o, d := range dy {
				if i := int(l.idx[p*out+o]); i >= 0 {
					dx[i] += d
				}
			}
			continue
		}
		for ph := range g.pooledH {
			for pw := range g.pooledW {
				h0, h1, w0, w1, size := g.window(ph, pw)
				d := dy[ph*g.pooledW+pw] / T(size)
				for h := h0; h < h1; h++ {
					row := dx[h*g.width+w0 : h*g.width+max(w1, w0)]
					for i := range row {
						row[i] += d
					}
				}
			}
		}
	}
}

// indexPoolBackward adds each output's gradient to the bottom element its
// index names (none for index -1).
func indexPoolBackward[T layer.Float](g *poolGeom, dy, idx, dx []T) {
	n, in, out := g.planes()
	for p := range n {
		dxp := dx[p*in : (p+1)*in]
		for o, d := range dy[p*out : (p+1)*out] {
			if i := int(idx[p*out+o]); i >= 0 {
				dxp[i] += d
			}
		}
	}
}

// stoPoolBackwardTest is the gradient of y = sum(x^2) / s with s = FLT_MIN
// + sum(x): dy * (2x - y) / s for each element of the window.
func stoPoolBackwardTest[T layer.Float](g *poolGeom, dy, x, y, s, dx []T) {
	g.eachWindow(func(w poolWindow) {
		o := w.out
		for h := w.h0; h < w.h1; h++ {
			for i := w.in + h*g.width + w.w0; i < w.in+h*g.width+w.w1; i++ {
				dx[i] += dy[o] * (2*x[i] - y[o]) / s[o]
			}
		}
	})
}

// PoolGeometry returns the geometry of a set-up Pooling layer.
func (l *poolingLayer[T]) PoolGeometry() layer.PoolGeometry {
	return layer.PoolGeometry{
		Method: l.method, Global: l.global,
		KernelH: l.kernelH, KernelW: l.kernelW,
		StrideH: l.strideH, StrideW: l.strideW,
		PadH: l.padH, PadW: l.padW,
		Height: l.height, Width: l.width,
		PooledH: l.pooledH, PooledW: l.pooledW,
	}
}

// poolingBackwardReads is Pooling's Spec.BackwardReads on the host: a
// maximum's gradient follows its saved mask (a second top, when the layer
// has one), an average's reads no data; a stochastic pooling's, in the
// TEST phase, reads both.
func poolingBackwardReads(p *caffepb.LayerParameter) layer.BackwardUse {
	switch p.GetPoolingParam().GetPool() {
	case caffepb.PoolingParameter_MAX:
		if len(p.GetTop()) > 1 {
			return layer.BackwardReadsTop
		}
		return layer.BackwardReadsNeither
	case caffepb.PoolingParameter_AVE:
		return layer.BackwardReadsNeither
	}
	return layer.BackwardReadsBoth
}
