package neuron

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
)

// bottomCopy keeps the input of an element-wise layer that runs in place
// (bottom and top the same blob) and whose backward pass needs x after the
// forward pass has overwritten it with y: Caffe's PReLU keeps such a copy
// (bottom_memory_); here PReLU, Power, Log, BNLL and Clip do, so that their
// gradients are right in place too. Out of place it holds nothing.
type bottomCopy[T layer.Float] struct{ saved *blob.Blob[T] }

// reshape sizes the copy for the bottom when the layer runs in place. The
// blob is made once, on the layer's device, and only grows afterwards.
func (c *bottomCopy[T]) reshape(b *layer.Base[T], bottom, top *blob.Blob[T]) error {
	if bottom != top {
		return nil
	}
	if c.saved == nil {
		nb, err := b.NewBlob()
		if err != nil {
			return err
		}
		c.saved = nb
	}
	return c.saved.ReshapeLike(bottom)
}

// input returns the blob that holds the forward pass's x: the bottom, or
// the copy when the layer runs in place.
func (c *bottomCopy[T]) input(bottom, top *blob.Blob[T]) *blob.Blob[T] {
	if bottom == top {
		return c.saved
	}
	return bottom
}

// saveBottom copies x on device d before an in-place forward pass
// overwrites it; it does nothing out of place.
func saveBottom[T layer.Float, A any](c *bottomCopy[T], d device.View[T, A], bottom, top *blob.Blob[T]) error {
	if bottom != top {
		return nil
	}
	d.Copy(bottom.Count(), d.Data(bottom), d.MutableData(c.saved))
	return d.Err()
}
