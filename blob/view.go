package blob

import "github.com/gocaffe/gocaffe/mathfn"

// View is one device's view of blobs: its math (a mathfn.Engine over the
// device's array type A) plus accessors that hand out a blob's data and
// diff as A. Code that does the same arithmetic on either device (a layer's
// two halves, a solver's update) is written once as a function of a View
// and called with HostView or GPUView.
type View[T Float, A any] interface {
	mathfn.Engine[T, A]
	Data(b *Blob[T]) A
	MutableData(b *Blob[T]) A
	Diff(b *Blob[T]) A
	MutableDiff(b *Blob[T]) A
}

// HostView is the CPU's View: arrays are slices of host memory.
type HostView[T Float] struct{ mathfn.CPU[T] }

// Data returns b's data for reading.
func (HostView[T]) Data(b *Blob[T]) []T { return b.CPUData() }

// MutableData returns b's data for writing.
func (HostView[T]) MutableData(b *Blob[T]) []T { return b.MutableCPUData() }

// Diff returns b's diff for reading.
func (HostView[T]) Diff(b *Blob[T]) []T { return b.CPUDiff() }

// MutableDiff returns b's diff for writing.
func (HostView[T]) MutableDiff(b *Blob[T]) []T { return b.MutableCPUDiff() }
