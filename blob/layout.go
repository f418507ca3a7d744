package blob

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/syncedmem"
)

// SetChannelsLast makes the device copies of the blob's data and diff hold
// it channels-last (NHWC: each position's channels together, which tensor
// cores want) while the host copies stay row-major (NCHW), or row-major
// again. It needs a reduced storage (SetStorage) and at least three axes:
// the first is the images, the second the channels, the rest the
// positions. The device values do not move: a net's plan sets the order
// before the layers write the blob. Memory shared with other blobs
// (ShareData) must be set for each of them alike.
func (b *Blob[T]) SetChannelsLast(on bool) error {
	if on && !b.Storage().Reduced() {
		return fmt.Errorf("blob: channels-last order needs a reduced storage, not %v", b.Storage())
	}
	if on && len(b.shape) < 3 {
		return fmt.Errorf("blob: channels-last order needs images, channels and positions, not shape %v", b.shape)
	}
	b.channelsLast = on
	if !on {
		return errors.Join(resetOrder(b.data), resetOrder(b.diff))
	}
	b.orderOf(b.data)
	b.orderOf(b.diff)
	return nil
}

// ChannelsLast reports whether the device copies hold the blob
// channels-last.
func (b *Blob[T]) ChannelsLast() bool { return b.channelsLast }

// ChannelsLastDims returns the images, channels and positions of the blob
// as a channels-last layer reads them: Shape[0], Shape[1] and the product
// of the rest.
func (b *Blob[T]) ChannelsLastDims() (n, c, s int) {
	if len(b.shape) < 2 {
		return 1, 1, b.count
	}
	n, c = b.shape[0], b.shape[1]
	if n*c == 0 {
		return n, c, 0
	}
	return n, c, b.count / (n * c)
}

// orderOf tells m, the blob's data or diff, the blob's order before an
// access that may copy it between host and device: memory a net's plan
// places several blobs in holds each one's shape in turn.
func (b *Blob[T]) orderOf(m *syncedmem.SyncedMemory) {
	if !b.channelsLast || m == nil {
		return
	}
	n, c, s := b.ChannelsLastDims()
	if n*c*s == 0 || m.SetChannelsLast(n, c, s) != nil {
		// No elements, or the storage became native since: row-major.
		resetOrder(m)
	}
}

func resetOrder(m *syncedmem.SyncedMemory) error {
	if m == nil {
		return nil
	}
	return m.SetChannelsLast(0, 0, 0)
}
