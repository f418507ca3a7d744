package normalization

import (
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
		Type:  "LRN",
		New32: newLRN[float32], New64: newLRN[float64],
		EngineField: func(p *caffepb.LayerParameter) layer.EngineName { return layer.EngineName(p.GetLrnParam().GetEngine()) },
		Engines:     []layer.EngineDef{layer.GPUEngine(newLRNGPU[float32], newLRNGPU[float64]), layer.CuDNNEngine(true, checkLRNForDNN, newLRNDNN[float32], newLRNDNN[float64])},
		CUDAGraph:   true,
		ONNX:        layer.ONNXConverted,
	})
}

// LRN is local response normalization of a 4-D (num, channels, height,
// width) bottom: y = x * scale^(-beta), where
//
//   - ACROSS_CHANNELS: scale = k + alpha/local_size * the sum of x^2 over
//     the local_size channels centred on x's (zero beyond the edges);
//   - WITHIN_CHANNEL: scale = 1 + alpha * the average of x^2 over the
//     local_size x local_size square centred on x in its plane. Caffe
//     builds this from average pooling with pad (local_size-1)/2, whose
//     divisor counts the padding, so it is always local_size^2; k is not
//     used.
//
// local_size must be odd. The window sums are computed directly for each
// element rather than as running sums, so that no rounding error carries
// from one channel to the next.
type lrnLayer[T layer.Float] struct {
	layer.Base[T]
	within                       bool
	size                         int
	alpha, beta, k               T
	num, channels, height, width int
	// scale holds each element's scale for backward.
	scale *blob.Blob[T]
	// pw holds scale^-beta of the host's ACROSS_CHANNELS pass, which
	// backward needs again: computed once.
	pw *blob.Blob[T]

	// The host's ACROSS_CHANNELS passes, images spread over the cores: the
	// pass in progress, scratch per part, and the part bodies, made once.
	x, y, dy, dx, scaleData, pwData []T
	sums                            [][]T
	forwardPart, backwardPart       func(part, lo, hi int)
	// infer says the forward pass keeps no scale for a backward pass and
	// computes in float32 (SetInferenceOnly); inferPart is its body.
	infer     bool
	inferPart func(part, lo, hi int)
}

// SetInferenceOnly lets a float32 ACROSS_CHANNELS pass of the usual betas
// (0.75, 0.5, 1) keep no scale and powers for a backward pass, square
// each plane once rather than once per window it is in, and take the
// power in float32 (mathfn.LRNScale, within a few ulp of the float64
// one) (layer.InferenceOnly): the float64 powers alone took half of
// GoogLeNet's conv2/norm2 at batch 1. Training keeps Caffe's pass.
func (l *lrnLayer[T]) SetInferenceOnly(on bool) {
	var zero T
	_, f32 := any(zero).(float32)
	l.infer = on && f32 && !l.within && (l.beta == 0.75 || l.beta == 0.5 || l.beta == 1)
}

func newLRN[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &lrnLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	lp := p.GetLrnParam()
	l.size = int(lp.GetLocalSize())
	if l.size%2 != 1 {
		return nil, fmt.Errorf("LRN only supports odd values for local_size, got %d", l.size)
	}
	switch lp.GetNormRegion() {
	case caffepb.LRNParameter_ACROSS_CHANNELS:
	case caffepb.LRNParameter_WITHIN_CHANNEL:
		l.within = true
	default:
		return nil, fmt.Errorf("unknown normalization region %v", lp.GetNormRegion())
	}
	l.alpha, l.beta, l.k = T(lp.GetAlpha()), T(lp.GetBeta()), T(lp.GetK())
	return l, nil
}

// Type returns "LRN".
func (*lrnLayer[T]) Type() string { return "LRN" }

// Counts returns one bottom and one top.
func (*lrnLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp creates the scale buffer.
func (l *lrnLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	var err error
	if l.scale, err = l.NewBlob(); err != nil {
		return err
	}
	l.pw, err = l.NewBlob()
	l.forwardPart, l.backwardPart = l.acrossForward, l.acrossBackward
	return err
}

// Reshape gives the top and the scale buffer the bottom's shape.
func (l *lrnLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	b := bottom[0]
	if b.NumAxes() != 4 {
		return fmt.Errorf("input must have 4 axes, corresponding to (num, channels, height, width), got %s", b.ShapeString())
	}
	s := b.Shape()
	l.num, l.channels, l.height, l.width = s[0], s[1], s[2], s[3]
	if err := top[0].ReshapeLike(b); err != nil {
		return err
	}
	if err := l.pw.ReshapeLike(b); err != nil {
		return err
	}
	return l.scale.ReshapeLike(b)
}

// lrnWindow is the geometry of LRN's windows over a 4-D blob.
type lrnWindow struct {
	within                  bool
	half                    int // (local_size - 1) / 2
	channels, height, width int
}

func (l *lrnLayer[T]) window() lrnWindow {
	return lrnWindow{l.within, (l.size - 1) / 2, l.channels, l.height, l.width}
}

// lrnSum returns the sum of f over the window centred on element i
// (clipped to the blob), adding the elements in ascending order as the
// kernels do.
func lrnSum[T layer.Float](g lrnWindow, i int, f func(j int) T) T {
	plane := g.height * g.width
	var s T
	if !g.within {
		c := i / plane % g.channels
		base := i - c*plane
		for cc := max(c-g.half, 0); cc <= min(c+g.half, g.channels-1); cc++ {
			s += f(base + cc*plane)
		}
		return s
	}
	w, h := i%g.width, i/g.width%g.height
	base := i - h*g.width - w
	for hh := max(h-g.half, 0); hh <= min(h+g.half, g.height-1); hh++ {
		for ww := max(w-g.half, 0); ww <= min(w+g.half, g.width-1); ww++ {
			s += f(base + hh*g.width + ww)
		}
	}
	return s
}

// coeffs returns the factor of the window's sum of squares in the scale,
// the scale's constant term, and the factor 2*alpha*beta/(window size) of
// the backward pass.
func (l *lrnLayer[T]) coeffs() (sumFactor, constant, backFactor T) {
	n := T(l.size)
	if l.within {
		n *= T(l.size)
		return l.alpha / n, 1, 2 * l.alpha * l.beta / n
	}
	return l.alpha / n, l.k, 2 * l.alpha * l.beta / n
}

// ForwardCPU computes each element's scale and output.
func (l *lrnLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if l.infer {
		l.x, l.y = bottom[0].CPUData(), top[0].MutableCPUData()
		l.parts(l.num*l.channels, (l.size+1)*l.height*l.width) // the window's squares and their sum
		if l.inferPart == nil {
			l.inferPart = l.acrossInfer
		}
		mathfn.ParallelChunks(l.num*l.channels, l.inferPart)
		l.x, l.y = nil, nil
		return nil
	}
	if !l.within {
		l.x, l.y = bottom[0].CPUData(), top[0].MutableCPUData()
		l.scaleData, l.pwData = l.scale.MutableCPUData(), l.pw.MutableCPUData()
		l.parts(l.num*l.channels, 2*l.height*l.width) // a sum and a square per part
		// Planes, not images: a batch of one keeps every core busy too
		// (GoogLeNet's conv2/norm2 at batch 1 on a 2-vCPU AVX2 machine:
		// 8.9 ms on one core with scalar powers, 5.5 with vector powers
		// on both, the machine loaded by other work).
		// Each plane on its own: in chunks a late helper leaves to
		// the others.
		mathfn.ParallelChunks(l.num*l.channels, l.forwardPart)
		l.x, l.y, l.scaleData, l.pwData = nil, nil, nil, nil
		return nil
	}
	x, y, scale := bottom[0].CPUData(), top[0].MutableCPUData(), l.scale.MutableCPUData()
	win := l.window()
	sumFactor, constant, _ := l.coeffs()
	sq := func(j int) T { return x[j] * x[j] }
	for i, v := range x {
		s := constant + sumFactor*lrnSum(win, i, sq)
		scale[i] = s
		y[i] = v * T(math.Pow(float64(s), float64(-l.beta)))
	}
	return nil
}

// BackwardCPU computes dx = dy * scale^-beta - 2*alpha*beta/n * x * (the
// window's sum of dy * y / scale), n being the window's size.
func (l *lrnLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	if !l.within {
		l.x, l.dx = bottom[0].CPUData(), bottom[0].MutableCPUDiff()
		l.y, l.dy, l.scaleData, l.pwData = top[0].CPUData(), top[0].CPUDiff(), l.scale.CPUData(), l.pw.CPUData()
		l.parts(l.num, (l.channels+1)*l.height*l.width) // an image's ratios and a plane
		mathfn.Parallel(l.num, l.backwardPart)
		l.x, l.y, l.dx, l.dy, l.scaleData, l.pwData = nil, nil, nil, nil, nil, nil
		return nil
	}
	x, dx := bottom[0].CPUData(), bottom[0].MutableCPUDiff()
	y, dy, scale := top[0].CPUData(), top[0].CPUDiff(), l.scale.CPUData()
	win := l.window()
	_, _, backFactor := l.coeffs()
	ratio := func(j int) T { return dy[j] * y[j] / scale[j] }
	for i, v := range x {
		acc := lrnSum(win, i, ratio)
		dx[i] = dy[i]*T(math.Pow(float64(scale[i]), float64(-l.beta))) - backFactor*v*acc
	}
	return nil
}

// parts sizes the scratch of the parts of a pass over units units:
// size elements each.
func (l *lrnLayer[T]) parts(units, size int) {
	for len(l.sums) < mathfn.Parts(units) {
		l.sums = append(l.sums, nil)
	}
	for p := range l.sums {
		l.sums[p] = kit.Grow(l.sums[p], size)
	}
}

// acrossForward is ACROSS_CHANNELS's forward pass over planes [lo, hi)
// (image n's channel c is plane n*channels + c): each window's sum of
// squares added channel by channel in ascending order (as lrnSum, element
// by element, and the kernels do). Every step is a whole-plane vector
// operation (mathfn's element-wise kernels), each product rounded before
// its sum as the element-by-element loops round them, so the results are
// theirs bit for bit; the loops took 5% of GoogLeNet's batch-1 pass on a
// 2-vCPU AVX2 machine.
func (l *lrnLayer[T]) acrossForward(part, lo, hi int) {
	plane, image := l.height*l.width, l.channels*l.height*l.width
	sumFactor, constant, _ := l.coeffs()
	sum, sq := l.sums[part][:plane], l.sums[part][plane:2*plane]
	for p := lo; p < hi; p++ {
		n, c := p/l.channels, p%l.channels
		x := l.x[n*image : (n+1)*image]
		first, last := max(c-l.half(), 0), min(c+l.half(), l.channels-1)
		// 0 + v*v is v*v: the first square is the sum so far.
		mathfn.Mul(plane, x[first*plane:], x[first*plane:], sum)
		for cc := first + 1; cc <= last; cc++ {
			xc := x[cc*plane:]
			mathfn.Mul(plane, xc, xc, sq)
			mathfn.Add(plane, sum, sq, sum)
		}
		off := p * plane
		scale, pw, y := l.scaleData[off:off+plane], l.pwData[off:off+plane], l.y[off:off+plane]
		mathfn.MulAddScalar(plane, sumFactor, constant, sum, scale)
		negPows(pw, scale, float64(l.beta))
		mathfn.Mul(plane, x[c*plane:], pw, y)
	}
}

// acrossInfer is acrossForward of an inference pass (SetInferenceOnly):
// each plane's squares computed once into a ring of local_size planes,
// each window's sum of them added in ascending order as acrossForward
// adds them (the same sums), then the output from the sum in float32.
func (l *lrnLayer[T]) acrossInfer(part, lo, hi int) {
	plane, image := l.height*l.width, l.channels*l.height*l.width
	sumFactor, constant, _ := l.coeffs()
	ring, sum := l.sums[part][:l.size*plane], l.sums[part][l.size*plane:(l.size+1)*plane]
	sq := func(c int) []T { return ring[c%l.size*plane : (c%l.size+1)*plane] }
	next := 0 // the next channel whose squares the ring lacks
	for p := lo; p < hi; p++ {
		n, c := p/l.channels, p%l.channels
		x := l.x[n*image : (n+1)*image]
		first, last := max(c-l.half(), 0), min(c+l.half(), l.channels-1)
		if p == lo || c == 0 {
			next = first // a new image, or the part's first plane
		}
		for ; next <= last; next++ {
			xc := x[next*plane : (next+1)*plane]
			mathfn.Mul(plane, xc, xc, sq(next))
		}
		acc := sq(first)
		for cc := first + 1; cc <= last; cc++ {
			mathfn.Add(plane, acc, sq(cc), sum)
			acc = sum
		}
		y := l.y[p*plane : (p+1)*plane]
		mathfn.LRNScale(asF32(x[c*plane:(c+1)*plane]), asF32(acc), asF32(y), float32(sumFactor), float32(constant), float64(l.beta))
	}
}

// asF32 is s as float32s: the inference pass runs on float32 layers
// alone (SetInferenceOnly).
func asF32[T layer.Float](s []T) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// acrossBackward is ACROSS_CHANNELS's backward pass over images [lo, hi):
// the ratios dy*y/scale of an image first, then each window's sum of them.
// Every step is a whole-plane vector operation (as acrossForward's), each
// product and quotient rounded as the element-by-element loops round them
// (dy*y, then /scale; dy*pw - (backFactor*x)*sum), so the results are
// theirs bit for bit (TestLRNAcrossBackwardVectorBitForBit); the loops
// took 4% of GoogLeNet's training pass at batch 8 on two Zen 4 cores.
func (l *lrnLayer[T]) acrossBackward(part, lo, hi int) {
	plane, image := l.height*l.width, l.channels*l.height*l.width
	_, _, backFactor := l.coeffs()
	ratio, tmp := l.sums[part][:image], l.sums[part][image:image+plane]
	for n := lo; n < hi; n++ {
		off := n * image
		dy, y, scale := l.dy[off:off+image], l.y[off:off+image], l.scaleData[off:off+image]
		mathfn.Mul(image, dy, y, ratio)
		mathfn.Div(image, ratio, scale, ratio)
		x, dx, pw := l.x[off:off+image], l.dx[off:off+image], l.pwData[off:off+image]
		for c := range l.channels {
			acc := dx[c*plane : (c+1)*plane] // dx's plane holds the sum until it is replaced
			clear(acc)
			for cc := max(c-l.half(), 0); cc <= min(c+l.half(), l.channels-1); cc++ {
				mathfn.Add(plane, acc, ratio[cc*plane:(cc+1)*plane], acc)
			}
			xs, dys, pws := x[c*plane:(c+1)*plane], dy[c*plane:(c+1)*plane], pw[c*plane:(c+1)*plane]
			mathfn.MulScalar(plane, backFactor, xs, tmp)
			mathfn.Mul(plane, tmp, acc, acc)
			mathfn.Mul(plane, dys, pws, tmp)
			mathfn.Sub(plane, tmp, acc, acc)
		}
	}
}

// half is (local_size - 1) / 2.
func (l *lrnLayer[T]) half() int { return (l.size - 1) / 2 }

// negPows sets dst[i] = T(negPow(src[i], beta)), eight at a time where
// the CPU can (AVX-512, float32, the betas negPow takes apart).
func negPows[T layer.Float](dst, src []T, beta float64) {
	dst = dst[:len(src)]
	for i := mathfn.NegPowPrefix(dst, src, beta); i < len(src); i++ {
		dst[i] = T(negPow(float64(src[i]), beta))
	}
}

// negPow is s^-beta, with the usual betas (0.75 in AlexNet and CaffeNet,
// 0.5, 1) from square roots and a division instead of a power, which costs
// several times more; the results agree to float64 rounding.
func negPow(s, beta float64) float64 {
	switch beta {
	case 0.75:
		r := math.Sqrt(s)
		return 1 / (r * math.Sqrt(r))
	case 0.5:
		return 1 / math.Sqrt(s)
	case 1:
		return 1 / s
	}
	return math.Pow(s, -beta)
}
