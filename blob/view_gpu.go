package blob

import (
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// GPUView is a device's View: arrays are device pointers, the math runs on
// the device's compute stream. Like the host accessors, its accessors
// return no error: a failed copy means a failed device, and they panic with
// a *syncedmem.DeviceError, which nets and solvers return as an error.
type GPUView[T Float] struct{ *mathfn.GPU[T] }

func devicePtr(p cuda.DevicePtr, err error) cuda.DevicePtr {
	if err != nil {
		panic(&syncedmem.DeviceError{Op: "blob on the device", Err: err})
	}
	return p
}

// Data returns b's data on the device for reading.
func (GPUView[T]) Data(b *Blob[T]) cuda.DevicePtr { return devicePtr(b.GPUData()) }

// MutableData returns b's data on the device for writing.
func (GPUView[T]) MutableData(b *Blob[T]) cuda.DevicePtr { return devicePtr(b.MutableGPUData()) }

// Diff returns b's diff on the device for reading.
func (GPUView[T]) Diff(b *Blob[T]) cuda.DevicePtr { return devicePtr(b.GPUDiff()) }

// MutableDiff returns b's diff on the device for writing.
func (GPUView[T]) MutableDiff(b *Blob[T]) cuda.DevicePtr { return devicePtr(b.MutableGPUDiff()) }
