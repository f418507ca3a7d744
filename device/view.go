package device

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// View is one device's view of blobs: its math (a mathfn.Engine over the
// device's array type A) plus accessors that hand out a blob's data and
// diff as A. Code that does the same arithmetic on either device (a layer's
// two halves, a solver's update) is written once as a function of a View
// and called with a HostView or a *GPUView.
//
// Like the blob accessors, a View's accessors return no error: on the GPU a
// failed copy means a failed device, and they panic with a
// *syncedmem.DeviceError, which Recover turns back into an error. The math
// records its first error (Err) until ResetErr starts a new sequence.
type View[T Float, A any] interface {
	mathfn.Engine[T, A]
	Data(b *blob.Blob[T]) A
	MutableData(b *blob.Blob[T]) A
	Diff(b *blob.Blob[T]) A
	MutableDiff(b *blob.Blob[T]) A
	// ResetErr clears the recorded error before a new sequence of
	// operations.
	ResetErr()
}

// Float is the element type of blobs.
type Float = blob.Float

// HostView is the CPU's View: arrays are slices of host memory. The zero
// HostView multiplies matrices with the default GEMM choice; Host gives
// the one of a context's settings.
type HostView[T Float] struct{ mathfn.CPU[T] }

// Host returns the host's View for work of context c: its math takes c's
// settings (the GEMM choice). A nil c gives the zero HostView.
func Host[T Float](c *Context) HostView[T] {
	return HostView[T]{mathfn.NewCPU[T](c.Settings().GEMM)}
}

var _ View[float32, []float32] = HostView[float32]{}

// Data returns b's data for reading.
func (HostView[T]) Data(b *blob.Blob[T]) []T { return b.CPUData() }

// MutableData returns b's data for writing.
func (HostView[T]) MutableData(b *blob.Blob[T]) []T { return b.MutableCPUData() }

// Diff returns b's diff for reading.
func (HostView[T]) Diff(b *blob.Blob[T]) []T { return b.CPUDiff() }

// MutableDiff returns b's diff for writing.
func (HostView[T]) MutableDiff(b *blob.Blob[T]) []T { return b.MutableCPUDiff() }

// ResetErr does nothing: the host's math never fails.
func (HostView[T]) ResetErr() {}

// GPUView is a GPU context's View: arrays are device pointers, the math
// runs on the device's compute stream with the context's kernels. Each user
// (a layer, a solver) keeps its own, made once by NewGPUView, so that a
// pass allocates nothing and one user's error is not another's.
type GPUView[T Float] struct{ mathfn.GPU[T] }

var _ View[float32, cuda.DevicePtr] = (*GPUView[float32])(nil)

// NewGPUView returns a view of c's device with c's math kernels, loading
// them (compiling them on the device's first use) if this is the context's
// first view. c must be a GPU context.
func NewGPUView[T Float](c *Context) (*GPUView[T], error) {
	if !c.OnGPU() {
		return nil, errHostContext
	}
	k, err := c.mathKernels()
	if err != nil {
		return nil, err
	}
	return &GPUView[T]{mathfn.NewGPU[T](c.dev, k)}, nil
}

func devicePtr(p cuda.DevicePtr, err error) cuda.DevicePtr {
	if err != nil {
		panic(&syncedmem.DeviceError{Op: "blob on the device", Err: err})
	}
	return p
}

// Data returns b's data on the device for reading.
func (*GPUView[T]) Data(b *blob.Blob[T]) cuda.DevicePtr { return devicePtr(b.GPUData()) }

// MutableData returns b's data on the device for writing.
func (*GPUView[T]) MutableData(b *blob.Blob[T]) cuda.DevicePtr {
	return devicePtr(b.MutableGPUData())
}

// Diff returns b's diff on the device for reading.
func (*GPUView[T]) Diff(b *blob.Blob[T]) cuda.DevicePtr { return devicePtr(b.GPUDiff()) }

// MutableDiff returns b's diff on the device for writing.
func (*GPUView[T]) MutableDiff(b *blob.Blob[T]) cuda.DevicePtr {
	return devicePtr(b.MutableGPUDiff())
}
