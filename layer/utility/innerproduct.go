package utility

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"gonum.org/v1/gonum/blas"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:          "InnerProduct",
		BackwardReads: layer.Reads(layer.BackwardReadsBottom),
		New32:         newInnerProduct[float32], New64: newInnerProduct[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newInnerProductGPU[float32], newInnerProductGPU[float64])},
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// InnerProduct is a fully connected layer: the axes from `axis` on are
// flattened to K inputs, and top = bottom * W^T + b with W of shape N x K
// (K x N with transpose), N = num_output. The axes before `axis` are batch.
type innerProductLayer[T layer.Float] struct {
	layer.Base[T]
	numOutput      int
	biasTerm       bool
	transpose      bool
	m, k           int // batch rows and inputs per row
	biasMultiplier *blob.Blob[T]
	topShape       []int     // reused by every Reshape
	fold           ipFold[T] // an inference plan's folded weights (innerproduct_fold.go)
}

func newInnerProduct[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &innerProductLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	ip := p.GetInnerProductParam()
	if ip.GetNumOutput() == 0 {
		return nil, errors.New("inner_product_param.num_output must be set and positive")
	}
	l.numOutput, l.biasTerm, l.transpose = int(ip.GetNumOutput()), ip.GetBiasTerm(), ip.GetTranspose()
	return l, nil
}

// Type returns "InnerProduct".
func (*innerProductLayer[T]) Type() string { return "InnerProduct" }

// Counts returns one bottom and one top.
func (*innerProductLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

func (l *innerProductLayer[T]) axis(bottom *blob.Blob[T]) (int, error) {
	return bottom.CanonicalAxisIndex(int(l.Param().GetInnerProductParam().GetAxis()))
}

// LayerSetUp creates and fills the weights (N x K, or K x N when
// transposed) and the bias (N), unless they came with the model.
func (l *innerProductLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	axis, err := l.axis(bottom[0])
	if err != nil {
		return err
	}
	l.k = bottom[0].CountFrom(axis)
	weightShape := []int{l.numOutput, l.k}
	if l.transpose {
		weightShape = []int{l.k, l.numOutput}
	}
	if len(l.Blobs()) > 0 {
		if l.biasTerm {
			return l.CheckParamShapes([]string{"weight", "bias"}, weightShape, []int{l.numOutput})
		}
		return l.CheckParamShapes([]string{"weight"}, weightShape)
	}
	ip := l.Param().GetInnerProductParam()
	w, err := l.NewParamBlob(ip.GetWeightFiller(), weightShape...)
	if err != nil {
		return fmt.Errorf("weight filler: %w", err)
	}
	l.AddBlob(w)
	if l.biasTerm {
		b, err := l.NewParamBlob(ip.GetBiasFiller(), l.numOutput)
		if err != nil {
			return fmt.Errorf("bias filler: %w", err)
		}
		l.AddBlob(b)
	}
	return nil
}

// Reshape sizes the top: the bottom's shape up to axis, then N.
func (l *innerProductLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	axis, err := l.axis(bottom[0])
	if err != nil {
		return err
	}
	if k := bottom[0].CountFrom(axis); k != l.k {
		return fmt.Errorf("input size incompatible with inner product parameters: %d inputs from axis %d of %s, the weights take %d",
			k, axis, bottom[0].ShapeString(), l.k)
	}
	l.m = bottom[0].CountRange(0, axis)
	l.topShape = append(append(l.topShape[:0], bottom[0].Shape()[:axis]...), l.numOutput)
	if err := top[0].Reshape(l.topShape); err != nil {
		return err
	}
	if l.biasTerm {
		return kit.Ones(l, &l.biasMultiplier, l.m)
	}
	return nil
}

// ForwardCPU computes the product on the host.
func (l *innerProductLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if l.fold.active && !l.FusionSuspended() {
		return l.forwardFolded(bottom, top)
	}
	return innerProductForward[T](l, device.Host[T](l.Context()), bottom, top)
}

// BackwardCPU computes the gradients on the host.
func (l *innerProductLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return innerProductBackward[T](l, device.Host[T](l.Context()), top, propagateDown, bottom)
}

// weightTrans is how the stored weights enter top = bottom * W^T.
func (l *innerProductLayer[T]) weightTrans() blas.Transpose {
	if l.transpose {
		return blas.NoTrans
	}
	return blas.Trans
}

func innerProductForward[T layer.Float, A any](l *innerProductLayer[T], d device.View[T, A], bottom, top []*blob.Blob[T]) error {
	out := d.MutableData(top[0])
	d.Gemm(blas.NoTrans, l.weightTrans(), l.m, l.numOutput, l.k, 1, d.Data(bottom[0]), d.Data(l.Blobs()[0]), 0, out)
	if l.biasTerm {
		d.Gemm(blas.NoTrans, blas.NoTrans, l.m, l.numOutput, 1, 1, d.Data(l.biasMultiplier), d.Data(l.Blobs()[1]), 1, out)
	}
	return d.Err()
}

func innerProductBackward[T layer.Float, A any](l *innerProductLayer[T], d device.View[T, A], top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	dy := d.Diff(top[0])
	if l.ParamPropagateDown(0) {
		if l.transpose {
			d.Gemm(blas.Trans, blas.NoTrans, l.k, l.numOutput, l.m, 1, d.Data(bottom[0]), dy, 1, d.MutableDiff(l.Blobs()[0]))
		} else {
			d.Gemm(blas.Trans, blas.NoTrans, l.numOutput, l.k, l.m, 1, dy, d.Data(bottom[0]), 1, d.MutableDiff(l.Blobs()[0]))
		}
	}
	if l.biasTerm && l.ParamPropagateDown(1) {
		d.Gemv(blas.Trans, l.m, l.numOutput, 1, dy, d.Data(l.biasMultiplier), 1, d.MutableDiff(l.Blobs()[1]))
	}
	if propagateDown[0] {
		wt := blas.NoTrans
		if l.transpose {
			wt = blas.Trans
		}
		d.Gemm(blas.NoTrans, wt, l.m, l.k, l.numOutput, 1, dy, d.Data(l.Blobs()[0]), 0, d.MutableDiff(bottom[0]))
	}
	return d.Err()
}

// FLOPs returns the floating-point operations of a forward pass and of a
// backward pass that computes the weight gradient and, with
// propagateDown, the bottom's: 2*m*n*k per product.
func (l *innerProductLayer[T]) FLOPs(propagateDown bool) (forward, backward float64) {
	f := 2 * float64(l.m) * float64(l.numOutput) * float64(l.k)
	backward = f
	if propagateDown {
		backward += f
	}
	return f, backward
}
