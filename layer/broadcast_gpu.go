package layer

import (
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
)

// gpuBroadcaster is the GPU's broadcaster (kernels/broadcast.cu).
type gpuBroadcaster[T Float] struct {
	*device.GPUView[T]
	ctx *device.Context
}

var broadcastKernels = [...]string{broadcastAdd: "broadcast_add", broadcastMul: "broadcast_mul"}

func (g gpuBroadcaster[T]) broadcast(op broadcastOp, n, dim, inner int, x, v, y cuda.DevicePtr) error {
	if err := g.Err(); err != nil {
		return err
	}
	var a cuda.Args
	a.Int(n).Int(dim).Int(inner).Ptr(x).Ptr(v).Ptr(y)
	return launch[T](g.ctx, "broadcast.cu", broadcastKernels[op], n, &a)
}

// broadcastAddReLU is broadcastAdd with a ReLU of the given negative
// slope applied in the same pass (a convolution's bias with the ReLU fused
// into it).
func (g gpuBroadcaster[T]) broadcastAddReLU(n, dim, inner int, x, v cuda.DevicePtr, slope T, y cuda.DevicePtr) error {
	if err := g.Err(); err != nil {
		return err
	}
	var a cuda.Args
	scalarArg(a.Int(n).Int(dim).Int(inner).Ptr(x).Ptr(v), slope).Ptr(y)
	return launch[T](g.ctx, "broadcast.cu", "broadcast_add_relu", n, &a)
}

// gpuBroadcasterOf returns the layer's GPU view as a broadcaster.
func gpuBroadcasterOf[T Float](b *Base[T]) gpuBroadcaster[T] {
	return gpuBroadcaster[T]{b.gpu(), b.ctx}
}
