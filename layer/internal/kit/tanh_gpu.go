package kit

import (
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
)

// The hyperbolic tangent on the device (kernels/tanh.cu), shared by the
// TanH layer and the recurrent layers' steps.

// TanhForward computes y = tanh(x) over n elements on c's stream.
func TanhForward[T Float](c *device.Context, n int, x, y cuda.DevicePtr) error {
	var a cuda.Args
	return Launch[T](c, kitKernels, "tanh.cu", "tanh_forward", n, a.Int(n).Ptr(x).Ptr(y))
}

// TanhBackward computes dx = dy * (1 - y^2) over n elements, y being the
// forward pass's output, on c's stream.
func TanhBackward[T Float](c *device.Context, n int, dy, y, dx cuda.DevicePtr) error {
	var a cuda.Args
	return Launch[T](c, kitKernels, "tanh.cu", "tanh_backward", n, a.Int(n).Ptr(dy).Ptr(y).Ptr(dx))
}
