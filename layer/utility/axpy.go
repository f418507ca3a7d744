package utility

import (
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Axpy",
		New32: newAxpy[float32], New64: newAxpy[float64],
		Engines:  []layer.EngineDef{layer.GPUEngine(newAxpyGPU[float32], newAxpyGPU[float64])},
		ONNX:     layer.ONNXConverted,
		NoGolden: "BVLC Caffe has no such layer: it is SENet's (hujie-frank/SENet)",
	})
}

// Axpy is SENet's layer (hujie-frank/SENet): top = a * x + y, bottoms a, x
// and y, where a holds one factor per image and channel (N x C, or N x C x
// 1 x 1 as SENet's excitation produces it) and x and y share a shape
// N x C x ...; each factor scales its channel's plane of x. It recalibrates
// a residual branch's channels before the shortcut is added, in one pass.
type axpyLayer[T layer.Float] struct {
	layer.Base[T]
	planes, spatial int // N*C, and the elements of one plane
}

func newAxpy[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &axpyLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "Axpy".
func (*axpyLayer[T]) Type() string { return "Axpy" }

// Counts: a, x and y; one top.
func (*axpyLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(3), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing to set up.
func (*axpyLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape checks the shapes and gives the top x's.
func (l *axpyLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	a, x, y := bottom[0], bottom[1], bottom[2]
	if x.NumAxes() < 2 || !x.SameShape(y) {
		return fmt.Errorf("x %s and y %s must have one shape of at least 2 axes", x.ShapeString(), y.ShapeString())
	}
	if a.NumAxes() < 2 || a.Shape()[0] != x.Shape()[0] || a.Shape()[1] != x.Shape()[1] || a.CountFrom(2) != 1 {
		return fmt.Errorf("a %s must be %d x %d (x 1 x 1), one factor per image and channel of x %s",
			a.ShapeString(), x.Shape()[0], x.Shape()[1], x.ShapeString())
	}
	l.planes, l.spatial = x.CountRange(0, 2), x.CountFrom(2)
	return top[0].ReshapeLike(x)
}

// ForwardCPU computes a * x + y plane by plane.
func (l *axpyLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	a, x, y, out := bottom[0].CPUData(), bottom[1].CPUData(), bottom[2].CPUData(), top[0].MutableCPUData()
	for p := range l.planes {
		s, lo := a[p], p*l.spatial
		for i := lo; i < lo+l.spatial; i++ {
			out[i] = s*x[i] + y[i]
		}
	}
	return nil
}

// BackwardCPU computes da = sum over the plane of dtop * x, dx = a * dtop
// and dy = dtop.
func (l *axpyLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	dtop := top[0].CPUDiff()
	a, x := bottom[0].CPUData(), bottom[1].CPUData()
	if propagateDown[0] {
		da := bottom[0].MutableCPUDiff()
		for p := range l.planes {
			var sum T
			for i := p * l.spatial; i < (p+1)*l.spatial; i++ {
				sum += dtop[i] * x[i]
			}
			da[p] = sum
		}
	}
	if propagateDown[1] {
		dx := bottom[1].MutableCPUDiff()
		for p := range l.planes {
			for i := p * l.spatial; i < (p+1)*l.spatial; i++ {
				dx[i] = a[p] * dtop[i]
			}
		}
	}
	if propagateDown[2] {
		copy(bottom[2].MutableCPUDiff(), dtop)
	}
	return nil
}
