package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/mathfn"
)

// device is a layer's view of one device: its math (an Engine over the
// device's array type A) and the blob accessors that hand out arrays of
// that type. A layer whose CPU and GPU halves do the same arithmetic writes
// it once as a function of a device and calls it with host[T] from
// ForwardCPU and with the GPU view from ForwardGPU.
type device[T Float, A any] interface {
	mathfn.Engine[T, A]
	data(b *blob.Blob[T]) A
	mutableData(b *blob.Blob[T]) A
	diff(b *blob.Blob[T]) A
	mutableDiff(b *blob.Blob[T]) A
}

// host is the CPU's device view.
type host[T Float] struct{ mathfn.CPU[T] }

func (host[T]) data(b *blob.Blob[T]) []T        { return b.CPUData() }
func (host[T]) mutableData(b *blob.Blob[T]) []T { return b.MutableCPUData() }
func (host[T]) diff(b *blob.Blob[T]) []T        { return b.CPUDiff() }
func (host[T]) mutableDiff(b *blob.Blob[T]) []T { return b.MutableCPUDiff() }
