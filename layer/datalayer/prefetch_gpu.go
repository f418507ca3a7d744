package datalayer

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// In GPU mode a batch's blobs belong to the device, so their host memory is
// pinned; the prefetch goroutine copies each loaded batch to the device
// asynchronously on a stream of its own and records an event after the
// copy (Caffe's async_gpu_push in BasePrefetchingDataLayer::
// InternalThreadEntry, except that Caffe waits for the copy there). It goes
// on loading the next batch while the copy runs; Forward makes the compute
// stream wait for the event (no host wait) and points its tops at the
// batch's device memory. The cuda package binds the context in every call,
// so the goroutine needs no locked thread.

// batchDevice marks the end of the compute work that may read the batch's
// device memory: that work is queued on the compute stream and may still
// be running when the batch goes back to the goroutine, which must not
// overwrite the batch's device memory before it ends.
//
// pushed marks the end of the batch's copy to the device; the goroutine
// waits for it before it writes the batch's host memory again.
type batchDevice struct {
	copied, pushed *cuda.Event
	pushing        bool // pushed is recorded and not yet waited for
}

// prefetchDevice is the device of a GPU-mode prefetcher (nil in CPU mode),
// the goroutine's stream, and the batch whose device memory the tops hold.
type prefetchDevice[T layer.Float] struct {
	dev     *cuda.Device
	stream  *cuda.Stream
	current *batch[T]
	pixels  *pixelDevice[T] // nil unless transformations end on the device
}

// newWaitEvent makes the events the goroutine waits on. They sleep
// (cuda.NewSyncEvent) rather than spin: on the H100, with spinning waits
// (cuStreamSynchronize, default events) the LeNet training loop fed by Data
// ran 11.7% behind the same loop fed by Input, with sleeping ones 5.4%
// (27 display intervals each, interleaved).
func newWaitEvent(d *cuda.Device) (*cuda.Event, error) { return d.NewSyncEvent() }

func initDevice[T layer.Float](p *prefetcher[T], ctx *device.Context) error {
	d := ctx.Device()
	if d == nil {
		return nil
	}
	s, err := d.NewStream()
	if err != nil {
		return fmt.Errorf("prefetch stream: %w", err)
	}
	p.dev = prefetchDevice[T]{dev: d, stream: s}
	for _, b := range p.batches {
		if b.dev.copied, err = newWaitEvent(d); err != nil {
			return errors.Join(fmt.Errorf("prefetch event: %w", err), closeDevice(p))
		}
		if b.dev.pushed, err = newWaitEvent(d); err != nil {
			return errors.Join(fmt.Errorf("prefetch event: %w", err), closeDevice(p))
		}
	}
	if err := initPixels(p, ctx); err != nil {
		return errors.Join(err, closeDevice(p))
	}
	return nil
}

// awaitPush waits for the batch's last copy to the device to end before
// the loader writes its host memory again (usually long over).
func awaitPush[T layer.Float](p *prefetcher[T], b *batch[T]) error {
	if p.dev.dev == nil || !b.dev.pushing {
		return nil
	}
	b.dev.pushing = false
	if err := b.dev.pushed.Synchronize(); err != nil {
		return fmt.Errorf("waiting for the batch's previous copy to the device: %w", err)
	}
	return nil
}

// pushToDevice queues the copy of a loaded batch to the device on the
// prefetch stream, after the compute work that read the batch's device
// memory last time, and records the batch's pushed event after it.
func pushToDevice[T layer.Float](p *prefetcher[T], b *batch[T]) error {
	if p.dev.dev == nil {
		return nil
	}
	if err := b.dev.copied.Synchronize(); err != nil {
		return fmt.Errorf("waiting for the previous copy out of the batch: %w", err)
	}
	if b.pix != nil && b.pix.used {
		if err := transformOnDevice(p, b); err != nil {
			return err
		}
		p.deviceTransformed.Add(1)
	} else if err := push(b.data, p.dev.stream); err != nil {
		return fmt.Errorf("pushing the batch data to the device: %w", err)
	}
	if b.label != nil {
		if err := push(b.label, p.dev.stream); err != nil {
			return fmt.Errorf("pushing the batch labels to the device: %w", err)
		}
	}
	if err := b.dev.pushed.Record(p.dev.stream); err != nil {
		return fmt.Errorf("marking the end of the batch's push: %w", err)
	}
	b.dev.pushing = true
	return nil
}

// push queues the copy of what the loader wrote; memory it did not write
// (still on the device, or never used) has nothing to copy.
func push[T layer.Float](b *blob.Blob[T], s *cuda.Stream) error {
	if b.Data().Head() != syncedmem.HeadAtCPU {
		return nil
	}
	return b.Data().AsyncGPUPush(s)
}

// closeDevice waits for the compute work that may read the batches (their
// device memory is freed next), then destroys the events and the stream.
func closeDevice[T layer.Float](p *prefetcher[T]) error {
	if p.dev.dev == nil {
		return nil
	}
	var errs []error
	if b := p.dev.current; b != nil { // its event marks an older iteration
		errs = append(errs, b.dev.copied.Record(p.dev.dev.Stream()))
	}
	for _, b := range p.batches {
		for _, e := range []**cuda.Event{&b.dev.copied, &b.dev.pushed} {
			if *e != nil {
				errs = append(errs, (*e).Synchronize(), (*e).Close())
				*e = nil
			}
		}
		b.dev.pushing = false
	}
	errs = append(errs, closePixels(p), p.dev.stream.Close())
	p.dev = prefetchDevice[T]{}
	return errors.Join(errs...)
}

// forwardGPU is the GPU forward of a prefetching layer.
func (pp *prefetching[T]) forwardGPU(top []*blob.Blob[T]) error {
	if pp.pf == nil {
		return errNotSetUp
	}
	err := forwardBatchGPU(pp.pf, top)
	runtime.KeepAlive(pp) // as in forward
	return err
}

// forwardBatchGPU is the GPU forward of every prefetching layer. As in
// Caffe's BasePrefetchingDataLayer::Forward_gpu, the tops take the batch's
// device memory itself, with no copy: the batch stays with the layer until
// the next Forward, which gives it back once everything queued on the
// compute stream so far (all the work that could read it) is marked by its
// event. A layer computing in place on the data top writes into the batch,
// which the goroutine reloads before it is used again.
func forwardBatchGPU[T layer.Float](p *prefetcher[T], top []*blob.Blob[T]) error {
	d := p.dev.dev
	if d == nil { // set up in CPU mode: the batches are on the host
		return forwardBatch(p, top)
	}
	if err := p.releaseCurrent(); err != nil {
		return err
	}
	b, err := p.next()
	if err != nil {
		return err
	}
	p.dev.current = b
	// The compute stream waits for the batch's copy; the host does not.
	if err := d.Stream().WaitEvent(b.dev.pushed); err != nil {
		return fmt.Errorf("ordering the compute stream after the batch's copy: %w", err)
	}
	if err := shareOnDevice(b.data, top[0]); err != nil {
		return err
	}
	if len(top) > 1 && b.label != nil {
		return shareOnDevice(b.label, top[1])
	}
	return nil
}

// releaseCurrent gives the batch the tops hold back to the goroutine,
// after marking the end of the compute work queued so far.
func (p *prefetcher[T]) releaseCurrent() error {
	b := p.dev.current
	if b == nil {
		return nil
	}
	p.dev.current = nil
	err := b.dev.copied.Record(p.dev.dev.Stream())
	if err != nil {
		// Without the event, wait for the work itself; the batch must go
		// back in any case, or the goroutine would wait for it forever.
		err = errors.Join(fmt.Errorf("marking the end of the batch's use: %w", err), p.dev.dev.Stream().Synchronize())
	}
	p.release(b)
	return err
}

// shareOnDevice makes dst, shaped as src, read src's device memory. The
// two may differ in capacity (AnnotatedData's labels change size from
// batch to batch), so dst's copies are bounded by src's memory.
func shareOnDevice[T layer.Float](src, dst *blob.Blob[T]) error {
	if err := dst.ReshapeLike(src); err != nil {
		return err
	}
	from, err := src.GPUData()
	if err != nil {
		return err
	}
	return dst.Data().SetSharedGPUData(from, src.Data().Size())
}
