//go:build cuda

package layer

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// In GPU mode a batch's blobs belong to the device, so their host memory is
// pinned; the prefetch goroutine copies each loaded batch to the device
// asynchronously on a stream of its own and waits for that stream before
// handing the batch over, so Forward only copies device to device (Caffe's
// async_gpu_push in BasePrefetchingDataLayer::InternalThreadEntry). The
// cuda package binds the context in every call, so the goroutine needs no
// locked thread.

// batchDevice marks the end of Forward's device copy out of the batch:
// that copy is queued on the compute stream and may still be running when
// the batch goes back to the goroutine, which must not overwrite the
// batch's device memory before it ends.
type batchDevice struct{ copied *cuda.Event }

// prefetchDevice is the device of a GPU-mode prefetcher (nil in CPU mode)
// and the goroutine's stream.
type prefetchDevice struct {
	dev    *cuda.Device
	stream *cuda.Stream
}

func initDevice[T Float](p *prefetcher[T], d *cuda.Device) error {
	if d == nil {
		return nil
	}
	s, err := d.NewStream()
	if err != nil {
		return fmt.Errorf("prefetch stream: %w", err)
	}
	p.dev = prefetchDevice{dev: d, stream: s}
	for _, b := range p.batches {
		if b.dev.copied, err = d.NewEvent(); err != nil {
			return errors.Join(fmt.Errorf("prefetch event: %w", err), closeDevice(p))
		}
	}
	return nil
}

// pushToDevice copies a loaded batch to the device on the prefetch stream
// and waits for the copy.
func pushToDevice[T Float](p *prefetcher[T], b *batch[T]) error {
	if p.dev.dev == nil {
		return nil
	}
	if err := b.dev.copied.Synchronize(); err != nil {
		return fmt.Errorf("waiting for the previous copy out of the batch: %w", err)
	}
	if err := push(b.data, p.dev.stream); err != nil {
		return fmt.Errorf("pushing the batch data to the device: %w", err)
	}
	if b.label != nil {
		if err := push(b.label, p.dev.stream); err != nil {
			return fmt.Errorf("pushing the batch labels to the device: %w", err)
		}
	}
	return p.dev.stream.Synchronize()
}

// push queues the copy of what the loader wrote; memory it did not write
// (still on the device, or never used) has nothing to copy.
func push[T Float](b *blob.Blob[T], s *cuda.Stream) error {
	if b.Data().Head() != syncedmem.HeadAtCPU {
		return nil
	}
	return b.Data().AsyncGPUPush(s)
}

// closeDevice waits for Forward's last copies (the batches' device memory
// is freed next), then destroys the events and the stream.
func closeDevice[T Float](p *prefetcher[T]) error {
	if p.dev.dev == nil {
		return nil
	}
	var errs []error
	for _, b := range p.batches {
		if b.dev.copied != nil {
			errs = append(errs, b.dev.copied.Synchronize(), b.dev.copied.Close())
			b.dev.copied = nil
		}
	}
	errs = append(errs, p.dev.stream.Close())
	p.dev = prefetchDevice{}
	return errors.Join(errs...)
}

// forwardGPU is the GPU forward of a prefetching layer.
func (pp *prefetching[T]) forwardGPU(top []*blob.Blob[T]) error {
	if pp.pf == nil {
		return errNotSetUp
	}
	return forwardBatchGPU(pp.pf, top)
}

// forwardBatchGPU is the GPU forward of every prefetching layer: device to
// device copies of a batch already on the device, on the compute stream.
func forwardBatchGPU[T Float](p *prefetcher[T], top []*blob.Blob[T]) error {
	d := p.dev.dev
	if d == nil { // set up in CPU mode: the batches are on the host
		return forwardBatch(p, top)
	}
	b, err := p.next()
	if err != nil {
		return err
	}
	defer p.release(b)
	if err := copyOnDevice(d, b.data, top[0]); err != nil {
		return err
	}
	if len(top) > 1 && b.label != nil {
		if err := copyOnDevice(d, b.label, top[1]); err != nil {
			return err
		}
	}
	return b.dev.copied.Record(d.Stream())
}

func copyOnDevice[T Float](d *cuda.Device, src, dst *blob.Blob[T]) error {
	if err := dst.ReshapeLike(src); err != nil {
		return err
	}
	from, err := src.GPUData()
	if err != nil {
		return err
	}
	to, err := dst.MutableGPUData()
	if err != nil {
		return err
	}
	var zero T
	return d.CopyDtoDAsync(to, from, src.Count()*int(unsafe.Sizeof(zero)), d.Stream())
}
