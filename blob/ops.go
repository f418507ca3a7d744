package blob

import (
	"fmt"

	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// Where the blob arithmetic runs: as in Caffe, on the side that holds the
// current copy, so that a GPU-resident blob is never copied down just to be
// summed. The device halves live in gpu.go (and cannot be reached in a
// build without CUDA, where no head can be on the device).
//
// cuBLAS would read the 16-bit device copy of a memory of reduced storage
// (syncedmem.StorageFloat16, StorageBFloat16) as elements of T: an
// operation on such memory runs on the host, whose accessors convert.

// onDevice reports whether an operation on memories ms whose first one has
// head h runs on the device: the head is there and no memory stores
// reduced elements.
func onDevice(h syncedmem.Head, ms ...*syncedmem.SyncedMemory) bool {
	if h != syncedmem.HeadAtGPU && h != syncedmem.Synced {
		return false
	}
	for _, m := range ms {
		if m.Storage().Reduced() {
			return false
		}
	}
	return true
}

// Update computes data -= diff, the step every solver ends with. It panics
// if the data was never initialised: a parameter blob is always filled
// before it is updated.
func (b *Blob[T]) Update() {
	switch h := b.data.Head(); {
	case h == syncedmem.Uninitialized:
		panic("blob: Update of a blob whose data is uninitialized")
	case onDevice(h, b.data, b.diff):
		gpuAxpy[T](b.count, -1, b.diff, b.data)
	default:
		mathfn.Axpy(b.count, -1, b.CPUDiff(), b.MutableCPUData())
	}
}

// AsumData returns the sum of the absolute values of the data (0 if it was
// never initialised).
func (b *Blob[T]) AsumData() T { return asum[T](b.data, b.count) }

// AsumDiff returns the sum of the absolute values of the diff.
func (b *Blob[T]) AsumDiff() T { return asum[T](b.diff, b.count) }

// SumsqData returns the sum of the squares of the data.
func (b *Blob[T]) SumsqData() T { return sumsq[T](b.data, b.count) }

// SumsqDiff returns the sum of the squares of the diff.
func (b *Blob[T]) SumsqDiff() T { return sumsq[T](b.diff, b.count) }

// ScaleData multiplies the data by f.
func (b *Blob[T]) ScaleData(f T) { scale(b.data, b.count, f) }

// ScaleDiff multiplies the diff by f.
func (b *Blob[T]) ScaleDiff(f T) { scale(b.diff, b.count, f) }

func asum[T Float](m *syncedmem.SyncedMemory, n int) T {
	switch h := m.Head(); {
	case h == syncedmem.Uninitialized:
		return 0
	case onDevice(h, m):
		return gpuAsum[T](n, m)
	}
	return mathfn.Asum(n, asT[T](m.CPUData(), n))
}

func sumsq[T Float](m *syncedmem.SyncedMemory, n int) T {
	switch h := m.Head(); {
	case h == syncedmem.Uninitialized:
		return 0
	case onDevice(h, m):
		return gpuDot[T](n, m, m)
	}
	x := asT[T](m.CPUData(), n)
	return mathfn.Dot(n, x, x)
}

func scale[T Float](m *syncedmem.SyncedMemory, n int, f T) {
	switch h := m.Head(); {
	case h == syncedmem.Uninitialized:
	case onDevice(h, m):
		gpuScal(n, f, m)
	default:
		mathfn.Scal(n, f, asT[T](m.MutableCPUData(), n))
	}
}

// CopyFrom copies src's data, or its diff if copyDiff, into b's data or
// diff. If the shapes differ, b is first reshaped like src when reshape is
// true; otherwise it is an error. A GPU-mode blob (see SetDevice) copies on
// the device, any other on the host, as does a GPU-mode blob whose memory
// stores its elements otherwise than src's (see SetStorage): the host
// copies convert.
func (b *Blob[T]) CopyFrom(src *Blob[T], copyDiff, reshape bool) error {
	if src.count != b.count || !b.SameShape(src) {
		if !reshape {
			return fmt.Errorf("blob: trying to copy blobs of different sizes: %s from %s", b.ShapeString(), src.ShapeString())
		}
		if err := b.ReshapeLike(src); err != nil {
			return err
		}
	}
	from, to := src.data, b.data
	if copyDiff {
		from, to = src.diff, b.diff
	}
	n := b.count * elemSize[T]()
	if b.dev != nil && from.Storage() == to.Storage() {
		if from.Storage().Reduced() {
			n /= 2 // 16-bit elements on the device
		}
		return gpuCopy(n, from, to)
	}
	copy(to.MutableCPUData()[:n], from.CPUData()[:n])
	return nil
}
