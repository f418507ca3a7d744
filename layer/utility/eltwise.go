package utility

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "Eltwise",
		BackwardReads: eltwiseBackwardReads,
		New32:         newEltwise[float32], New64: newEltwise[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newEltwiseGPU[float32], newEltwiseGPU[float64])},
		CUDAGraph: true,
		FusesNext: []string{"ReLU"},
		ONNX:      layer.ONNXConverted,
	})
}

// Eltwise combines bottoms of one shape element by element:
// eltwise_param.operation SUM (default; weighted by coeff, one per bottom),
// PROD, or MAX (which remembers which bottom won, for the backward pass).
type eltwiseLayer[T layer.Float] struct {
	layer.Base[T]
	op         caffepb.EltwiseParameter_EltwiseOp
	coeffs     []T
	stableProd bool
	// mask holds, for MAX, the index of the bottom that gave each top
	// element (as T: small integers are exact).
	mask *blob.Blob[T]
	// relu, if not nil, is the ReLU in place on the top that the GPU
	// engine computes too (Fuse).
	relu      layer.Layer[T]
	reluSlope T
	hostSum   eltwiseSumHost[T]
}

func newEltwise[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &eltwiseLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	ep := p.GetEltwiseParam()
	l.op, l.stableProd = ep.GetOperation(), ep.GetStableProdGrad()
	if l.op == caffepb.EltwiseParameter_PROD && len(ep.GetCoeff()) > 0 {
		return nil, errors.New("eltwise_param.coeff is only supported by operation SUM, not PROD")
	}
	return l, nil
}

// Type returns "Eltwise".
func (*eltwiseLayer[T]) Type() string { return "Eltwise" }

// Counts returns two or more bottoms and one top.
func (*eltwiseLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.AtLeast(2), Top: layer.Exactly(1)}
}

// LayerSetUp reads the coefficients (default 1), one per bottom, and
// creates MAX's mask.
func (l *eltwiseLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	coeff := l.Param().GetEltwiseParam().GetCoeff()
	if len(coeff) != 0 && len(coeff) != len(bottom) {
		return fmt.Errorf("eltwise_param.coeff: takes one coefficient per bottom blob: %d coefficients for %d bottoms", len(coeff), len(bottom))
	}
	l.coeffs = make([]T, len(bottom))
	for i := range l.coeffs {
		l.coeffs[i] = 1
		if len(coeff) > 0 {
			l.coeffs[i] = T(coeff[i])
		}
	}
	if l.op == caffepb.EltwiseParameter_MAX {
		mask, err := l.NewBlob()
		if err != nil {
			return err
		}
		l.mask = mask
	}
	return nil
}

// Reshape checks that the bottoms share one shape and gives it to the top.
func (l *eltwiseLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	for i, b := range bottom[1:] {
		if !b.SameShape(bottom[0]) {
			return fmt.Errorf("all inputs must have the same shape: bottom 0 has shape %s, bottom %d has shape %s",
				bottom[0].ShapeString(), i+1, b.ShapeString())
		}
	}
	if l.mask != nil {
		if err := l.mask.ReshapeLike(bottom[0]); err != nil {
			return err
		}
	}
	return top[0].ReshapeLike(bottom[0])
}

// ForwardCPU combines the bottoms on the host.
func (l *eltwiseLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	switch l.op {
	case caffepb.EltwiseParameter_MAX:
		l.maxForwardCPU(bottom, top[0])
		return nil
	case caffepb.EltwiseParameter_SUM:
		l.hostSum.forward(l.coeffs, bottom, top, l.fusesReLU())
		return nil
	}
	return eltwiseForward[T](l, device.HostView[T]{}, bottom, top)
}

// BackwardCPU computes the bottoms' gradients on the host.
func (l *eltwiseLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if l.op == caffepb.EltwiseParameter_MAX {
		l.maxBackwardCPU(top[0], propagateDown, bottom)
		return nil
	}
	if l.fusesReLU() {
		l.hostSum.backwardReLU(l.coeffs, top, propagateDown, bottom)
		return nil
	}
	return eltwiseBackward[T](l, device.HostView[T]{}, top, propagateDown, bottom)
}

// eltwiseForward computes SUM and PROD, which need only the device's
// element-wise math.
func eltwiseForward[T layer.Float, A any](l *eltwiseLayer[T], d device.View[T, A], bottom, top []*blob.Blob[T]) error {
	n := top[0].Count()
	y := d.MutableData(top[0])
	switch l.op {
	case caffepb.EltwiseParameter_PROD:
		d.Mul(n, d.Data(bottom[0]), d.Data(bottom[1]), y)
		for _, b := range bottom[2:] {
			d.Mul(n, y, d.Data(b), y)
		}
	case caffepb.EltwiseParameter_SUM:
		d.Scale(n, l.coeffs[0], d.Data(bottom[0]), y)
		for i, b := range bottom[1:] {
			d.Axpy(n, l.coeffs[i+1], d.Data(b), y)
		}
	default:
		return fmt.Errorf("unknown eltwise operation %v", l.op)
	}
	return d.Err()
}

// eltwiseBackward computes the gradients of SUM (coeff * dy) and PROD (dy
// times the product of the other bottoms: re-multiplied when stable, top /
// bottom otherwise).
func eltwiseBackward[T layer.Float, A any](l *eltwiseLayer[T], d device.View[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	n := top[0].Count()
	dy := d.Diff(top[0])
	for i, b := range bottom {
		if !propagateDown[i] {
			continue
		}
		dx := d.MutableDiff(b)
		switch {
		case l.op == caffepb.EltwiseParameter_SUM && l.coeffs[i] == 1:
			d.Copy(n, dy, dx)
		case l.op == caffepb.EltwiseParameter_SUM:
			d.Scale(n, l.coeffs[i], dy, dx)
		case l.stableProd:
			productOfOthers(d, bottom, i, dx)
			d.Mul(n, dx, dy, dx)
		default:
			d.Div(n, d.Data(top[0]), d.Data(b), dx)
			d.Mul(n, dx, dy, dx)
		}
	}
	return d.Err()
}

// productOfOthers writes the product of every bottom but skip into out.
func productOfOthers[T layer.Float, A any](d device.View[T, A], bottom []*blob.Blob[T], skip int, out A) {
	n := bottom[0].Count()
	first := true
	for j, b := range bottom {
		switch {
		case j == skip:
		case first:
			d.Copy(n, d.Data(b), out)
			first = false
		default:
			d.Mul(n, d.Data(b), out, out)
		}
	}
}

// maxForwardCPU takes the element-wise maximum and records the winner as
// Caffe's CPU code does: between bottoms 0 and 1 a tie goes to bottom 1,
// each later bottom must be strictly greater to win.
func (l *eltwiseLayer[T]) maxForwardCPU(bottom []*blob.Blob[T], top *blob.Blob[T]) {
	y, mask := top.MutableCPUData(), l.mask.MutableCPUData()
	a, b := bottom[0].CPUData(), bottom[1].CPUData()
	for j := range y {
		if a[j] > b[j] {
			y[j], mask[j] = a[j], 0
		} else {
			y[j], mask[j] = b[j], 1
		}
	}
	for i, bl := range bottom[2:] {
		for j, v := range bl.CPUData() {
			if v > y[j] {
				y[j], mask[j] = v, T(i+2)
			}
		}
	}
}

// maxBackwardCPU routes each element's gradient to the bottom that won it.
func (l *eltwiseLayer[T]) maxBackwardCPU(top *blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) {
	dy, mask := top.CPUDiff(), l.mask.CPUData()
	for i, b := range bottom {
		if !propagateDown[i] {
			continue
		}
		dx := b.MutableCPUDiff()
		for j, m := range mask {
			if m == T(i) {
				dx[j] = dy[j]
			} else {
				dx[j] = 0
			}
		}
	}
}

// eltwiseBackwardReads is Eltwise's Spec.BackwardReads: a product's
// gradient divides the top by a bottom (or multiplies the other bottoms);
// a sum's needs no data, a maximum's its saved mask.
func eltwiseBackwardReads(p *caffepb.LayerParameter) layer.BackwardUse {
	if p.GetEltwiseParam().GetOperation() == caffepb.EltwiseParameter_PROD {
		return layer.BackwardReadsBoth
	}
	return layer.BackwardReadsNeither
}
