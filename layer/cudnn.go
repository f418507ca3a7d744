package layer

import (
	"errors"
	"sync"

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

// CuDNNEngine is the EngineDef of a built-in layer type's cuDNN engine:
// accepts says which parameters it takes (besides cuDNN being there),
// fallback whether `engine: CUDNN` on a layer it does not take uses
// Caffe's engine (true) or fails (false), as Caffe's factory does for the
// type.
func CuDNNEngine[L32 Layer[float32], L64 Layer[float64]](fallback bool, accepts func(p *caffepb.LayerParameter) error,
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
