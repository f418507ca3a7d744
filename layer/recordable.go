package layer

import "fmt"

// recordableTypes are the layer types whose GPU passes a recorded CUDA
// graph replays faithfully. Each of their passes only queues work on the
// compute stream, waits for nothing, reads nothing back to the host, and
// hands its kernels no value that changes from one pass to the next other
// than through device memory: the random keys of Dropout and stochastic
// pooling change through the RNG salt (device.Context.SetRNGSalt), and
// SoftmaxWithLoss normalises on the device. A type not listed here may be
// correct to record too; it is listed once its GPU half has been read for
// this, because a value baked into a graph fails silently, where a wait or
// a read-back fails the recording (cuda.Stream.BeginCapture).
var recordableTypes = map[string]bool{
	"AbsVal": true, "BatchNorm": true, "Bias": true, "BNLL": true, "Clip": true,
	"Concat": true, "Convolution": true, "ConvolutionDepthwise": true, "Crop": true,
	"Deconvolution": true, "Dropout": true, "Eltwise": true, "ELU": true, "Exp": true,
	"Flatten": true, "InnerProduct": true, "Log": true, "LRN": true, "Pooling": true,
	"Power": true, "PReLU": true, "ReLU": true, "Reshape": true, "Scale": true,
	"Sigmoid": true, "Silence": true, "Slice": true, "Softmax": true,
	"SoftmaxWithLoss": true, "Split": true, "Swish": true, "TanH": true,
	"Threshold": true, "Tile": true,
}

// Recordable returns nil when a CUDA graph may record l's passes and
// replay them: l computes on the GPU and its type is one whose GPU passes
// are known to depend on nothing but device memory (see recordableTypes).
// Otherwise the error says which of the two it is not.
func Recordable[T Float](l Layer[T]) error {
	if !l.LayerBase().engineOnGPU {
		return fmt.Errorf("layer %q (%s) computes on the host", l.LayerBase().Name(), l.Type())
	}
	if !recordableTypes[l.Type()] {
		return fmt.Errorf("layer %q (%s) is not among the types known to replay faithfully from a CUDA graph", l.LayerBase().Name(), l.Type())
	}
	return nil
}
