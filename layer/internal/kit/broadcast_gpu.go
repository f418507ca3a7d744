package kit

import (
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
)

// GPUBroadcaster is the GPU's broadcaster (kernels/broadcast.cu).
type GPUBroadcaster[T Float] struct {
	*device.GPUView[T]
	Ctx *device.Context // the view's context, whose stream runs the kernels
}

var broadcastKernels = [...]string{BroadcastAdd: "broadcast_add", BroadcastMul: "broadcast_mul"}

// Broadcast applies op on the device (see Broadcaster).
func (g GPUBroadcaster[T]) Broadcast(op BroadcastOp, n, dim, inner int, x, v, y cuda.DevicePtr) error {
	if err := g.Err(); err != nil {
		return err
	}
	var a cuda.Args
	a.Int(n).Int(dim).Int(inner).Ptr(x).Ptr(v).Ptr(y)
	return Launch[T](g.Ctx, kitKernels, "broadcast.cu", broadcastKernels[op], n, &a)
}

// BroadcastAddReLU is broadcastAdd with a ReLU of the given negative
// slope applied in the same pass (a convolution's bias with the ReLU fused
// into it).
func (g GPUBroadcaster[T]) BroadcastAddReLU(n, dim, inner int, x, v cuda.DevicePtr, slope T, y cuda.DevicePtr) error {
	if err := g.Err(); err != nil {
		return err
	}
	var a cuda.Args
	ScalarArg(a.Int(n).Int(dim).Int(inner).Ptr(x).Ptr(v), slope).Ptr(y)
	return Launch[T](g.Ctx, kitKernels, "broadcast.cu", "broadcast_add_relu", n, &a)
}

// GPUBroadcasterOf returns the layer's GPU view as a broadcaster.
func GPUBroadcasterOf[T Float](b GPUViewer[T]) GPUBroadcaster[T] {
	return GPUBroadcaster[T]{b.GPU(), b.Context()}
}
