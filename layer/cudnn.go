package layer

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// The cuDNN engines (engine: CUDNN, and DEFAULT where cuDNN takes the
// layer): Convolution, Pooling (AVE), LRN (ACROSS_CHANNELS), Softmax, ReLU
// (negative_slope 0), Sigmoid and TanH, as Caffe's cuDNN build has them.
// cuDNN is found at run time (cuda.Device.DNN): without it DEFAULT takes
// gocaffe's own kernels and says so once.

// cuDNNEngine is the EngineDef of a built-in layer type's cuDNN engine:
// accepts says which parameters it takes (besides cuDNN being there),
// fallback whether `engine: CUDNN` on a layer it does not take uses
// Caffe's engine (true) or fails (false), as Caffe's factory does for the
// type.
func cuDNNEngine[L32 Layer[float32], L64 Layer[float64]](fallback bool, accepts func(p *caffepb.LayerParameter) error,
	new32 func(L32, *cuda.DNN) (Engine[float32], error), new64 func(L64, *cuda.DNN) (Engine[float64], error)) EngineDef {
	return EngineDef{Engine: EngineCuDNN, Fallback: fallback,
		Accepts: func(p *caffepb.LayerParameter, ctx *device.Context) error {
			if accepts != nil {
				if err := accepts(p); err != nil {
					return err
				}
			}
			if !ctx.OnGPU() {
				return nil // on the host a CUDNN layer runs its CPU half, as in Caffe
			}
			_, err := dnnFor(ctx, p)
			return err
		},
		New32: func(l Layer[float32], ctx *device.Context) (Engine[float32], error) {
			dnn, err := dnnFor(ctx, l.LayerBase().Param())
			if err != nil {
				return nil, err
			}
			return new32(l.(L32), dnn)
		},
		New64: func(l Layer[float64], ctx *device.Context) (Engine[float64], error) {
			dnn, err := dnnFor(ctx, l.LayerBase().Param())
			if err != nil {
				return nil, err
			}
			return new64(l.(L64), dnn)
		}}
}

// noDNNOnce says once per process that cuDNN is missing.
var noDNNOnce sync.Once

// dnnFor returns the cuDNN handle of ctx's GPU. Without cuDNN it logs, the
// first time, that gocaffe's own kernels take over.
func dnnFor(ctx *device.Context, p *caffepb.LayerParameter) (*cuda.DNN, error) {
	dnn, err := ctx.DNN()
	if err != nil && errors.Is(err, cuda.ErrNoCuDNN) {
		noDNNOnce.Do(func() {
			logf.Warnf(nil, "cuDNN is not available (%v): layers run on gocaffe's own GPU kernels", err)
		})
	}
	return dnn, err
}

// dnnType is cuDNN's type of T.
func dnnType[T Float]() cuda.DNNType {
	var zero T
	return cuda.DNNTypeOf(int(unsafe.Sizeof(zero)))
}

// tensorDesc keeps a tensor descriptor of some dims, remade only when they
// change.
type tensorDesc[T Float] struct {
	d    *cuda.TensorDesc
	dims []int
}

// set gives the descriptor dims.
func (t *tensorDesc[T]) set(dims ...int) error {
	if t.d != nil && sameInts(t.dims, dims) {
		return nil
	}
	t.dims = append(t.dims[:0], dims...)
	if t.d == nil {
		d, err := cuda.NewTensorDesc(dnnType[T](), dims)
		t.d = d
		return err
	}
	return t.d.Set(dims)
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkLRNForDNN says whether cuDNN computes a layer's LRN: across
// channels, with the window and constants cuDNN allows.
func checkLRNForDNN(p *caffepb.LayerParameter) error {
	lp := p.GetLrnParam()
	switch {
	case lp.GetNormRegion() != caffepb.LRNParameter_ACROSS_CHANNELS:
		return errors.New("cuDNN's LRN is across channels only")
	case lp.GetLocalSize() < 1 || lp.GetLocalSize() > 16:
		return fmt.Errorf("cuDNN's LRN takes local_size 1 to 16, not %d", lp.GetLocalSize())
	case lp.GetK() < 1e-5 || lp.GetBeta() < 0.01:
		return fmt.Errorf("cuDNN's LRN needs k >= 1e-5 and beta >= 0.01 (k %g, beta %g)", lp.GetK(), lp.GetBeta())
	}
	return nil
}

// caffeGPUEngine makes gocaffe's own GPU engine of l's type, for a cuDNN
// engine that hands it the shapes cuDNN does not compute as Caffe.
func caffeGPUEngine[T Float](l Layer[T]) (Engine[T], error) {
	entry := lookupEngine(l.Type(), EngineCaffe)
	if entry == nil {
		return nil, fmt.Errorf("no GPU engine of gocaffe's own for %s", l.Type())
	}
	var e any
	var err error
	switch l := any(l).(type) {
	case Layer[float32]:
		e, err = entry.f32(l, l.LayerBase().ctx)
	case Layer[float64]:
		e, err = entry.f64(l, l.LayerBase().ctx)
	}
	if err != nil {
		return nil, err
	}
	return e.(Engine[T]), nil
}
