package kit

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
)

// BlobMaker makes blobs on a layer's device: *layer.Base satisfies it.
type BlobMaker[T Float] interface {
	NewBlob(shape ...int) (*blob.Blob[T], error)
}

// GPUViewer hands out a layer's view of its GPU context for a pass, and
// the context: *layer.Base satisfies it.
type GPUViewer[T Float] interface {
	GPU() *device.GPUView[T]
	Context() *device.Context
}

// Ones keeps *ones a vector of n ones on m's device, refilling it only
// when n changes, so that a steady-state pass writes nothing on the host.
func Ones[T Float](m BlobMaker[T], ones **blob.Blob[T], n int) error {
	if *ones != nil && (*ones).Count() == n && (*ones).NumAxes() == 1 {
		return nil
	}
	if *ones == nil {
		nb, err := m.NewBlob()
		if err != nil {
			return err
		}
		*ones = nb
	}
	if err := (*ones).Reshape([]int{n}); err != nil {
		return err
	}
	data := (*ones).MutableCPUData()
	for i := range data {
		data[i] = 1
	}
	return nil
}

// EnsureBlob makes *b, a buffer on m's device, on first use.
func EnsureBlob[T Float](m BlobMaker[T], b **blob.Blob[T]) error {
	if *b != nil {
		return nil
	}
	var err error
	*b, err = m.NewBlob()
	return err
}
