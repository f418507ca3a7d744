// Package cuda is gocaffe's own thin binding to the CUDA driver API, cuBLAS
// and NVRTC. It is the only package that calls CUDA.
//
// The binding is compiled only with the `cuda` build tag. Without it (the
// default, and what CI builds) every function here returns ErrNoCUDA, so
// code above can ask for the GPU and get a clear error instead of a link
// failure. Types that appear in other packages' signatures (DevicePtr,
// Device, Stream) exist in both builds.
package cuda

import "errors"

// ErrNoCUDA is returned by every GPU operation in a build without the `cuda`
// tag.
var ErrNoCUDA = errors.New("cuda: gocaffe was built without CUDA support (rebuild with -tags cuda on a machine with the CUDA toolkit)")

// DevicePtr is an address in device memory, as the driver API's CUdeviceptr.
// The zero value is the null pointer.
type DevicePtr uintptr

// Add returns p advanced by n bytes.
func (p DevicePtr) Add(n int) DevicePtr { return p + DevicePtr(n) }
