package datalayer

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/settings"
)

// With GOCAFFE_JPEG=nvjpeg, a Data layer in GPU mode whose transformation
// ends on the device (prefetch_pixels.go) decodes its JPEGs with nvJPEG as
// well as on the host's cores. The prefetch goroutine reads each batch's
// records and draws the items' crops and mirrors from the JPEGs' headers,
// in the batch's order as ever. Then nvJPEG (the hardware decoder of an
// A100 or H100) decodes a share of the batch on the device while the
// host's cores decode the rest, which is copied to the device next to
// nvJPEG's images; transform_decoded (kernels/data_transform.cu) crops,
// mirrors and subtracts the mean from all of them. nvJPEG's share is the
// least that keeps the layer from waiting for batches (balance).
//
// Why both: on the 16-core H100 machine the host's cores decode about
// 11,000 of CaffeNet's 256x256 JPEGs a second, and CaffeNet's training
// at batch 256 eats 12,000. nvJPEG alone decodes 27,000 a second, but
// only about 5,000 while the same GPU trains (why, we have not found: not
// the legacy stream, stream priorities or its allocations, each tried),
// so neither side alone keeps up and both together nearly do
// (docs/performance.md has the figures).
//
// It is an opt-in because nvJPEG's pixels are not Caffe's: its IDCT and
// chroma upsampling round differently from libjpeg's, so a pixel may
// differ by a few levels (3 at most in TestDeviceJPEGGPU). A batch nvJPEG
// cannot take (a PNG, a progressive JPEG on the hardware decoder, images
// of several sizes, a corrupt image) is decoded on the host as without
// the option, with the same crops and mirrors; without libnvjpeg every
// batch is, after one warning.

// deviceJPEGOn reads the JPEG setting (GOCAFFE_JPEG) of ctx: nvjpeg
// decodes on the device, host on the host.
func deviceJPEGOn(ctx *device.Context) (bool, error) {
	switch v := ctx.Settings().JPEG; v {
	case settings.JPEGHost:
		return false, nil
	case settings.JPEGNVJPEG:
		return true, nil
	default:
		return false, fmt.Errorf("JPEG setting %v: want nvjpeg (decode JPEGs on the GPU) or host", v)
	}
}

// errHostJPEG is wrapped by jpegDevice.decode's errors for batches the
// host must decode.
var errHostJPEG = errors.New("decoding the batch on the host")

// jpegDevice is a prefetcher's nvJPEG decoders, created on first use, and
// the device memory its batches are decoded into (one batch at a time).
// A batch is split into parts decoded at once, each by its own decoder
// on its own stream, after the work queued on the prefetch stream before
// (which may read the previous batch's images); the prefetch stream waits
// for the parts' ends before the kernel that reads the images.
type jpegDevice struct {
	dev      *cuda.Device
	backend  settings.NVJPEGBackend // the context's, for its decoders
	stream   *cuda.Stream
	parts    []*jpegPart
	ready    *cuda.Event // the prefetch stream's work before the batch
	missing  error       // why there is no decoder: every batch goes to the host
	warned   bool        // the loader has logged missing
	images   cuda.DevicePtr
	capacity int
	decoded  atomic.Int64 // batches decoded on the device, for tests
	// share is the part of a batch nvJPEG decodes (0 before the first),
	// the host's cores the rest into host (pinned), whose copy to images
	// uploaded marks.
	share     float64
	waits     *atomic.Int64 // the prefetcher's count of batches waited for
	waited    int64         // its value at the last batch
	host      []byte
	uploaded  *cuda.Event
	uploading bool
}

// jpegPart is one of jpegDevice's decoders, with its stream and the event
// marking the end of its part of the batch.
type jpegPart struct {
	dec    *cuda.JPEGDecoder
	stream *cuda.Stream
	done   *cuda.Event
	err    error
}

// jpegParts is how many parts nvJPEG decodes its share of a batch in, at
// once. Under CaffeNet's training on the H100, nvJPEG's hardware decoder
// took 26 ms for 256 images in one call (10 ms alone), 22 ms in 2 to 8
// parts.
const jpegParts = 2

// open creates the decoders on first use. Where nvJPEG cannot make one
// (no libnvjpeg, a device it does not support), it records why in
// j.missing, and every batch is decoded on the host.
func (j *jpegDevice) open() error {
	if j.parts != nil || j.missing != nil {
		return nil
	}
	var err error
	if j.ready == nil {
		if j.ready, err = j.dev.NewEvent(); err != nil {
			return err
		}
	}
	if j.uploaded == nil {
		if j.uploaded, err = j.dev.NewSyncEvent(); err != nil {
			return err
		}
	}
	parts := make([]*jpegPart, jpegParts)
	for k := range parts {
		part := &jpegPart{}
		parts[k] = part
		if part.dec, err = j.dev.NewJPEGDecoder(j.backend); err != nil {
			j.missing = err
			err = nil
		} else if part.stream, err = j.dev.NewStream(); err == nil {
			part.done, err = j.dev.NewEvent()
		}
		if err != nil || j.missing != nil {
			return errors.Join(err, closeParts(parts[:k+1]))
		}
	}
	j.parts = parts
	return nil
}

// decode queues the decoding of JPEGs of c x h x w into the first images
// of j.images (reserved and opened before). An error wrapping errHostJPEG
// means the host must decode the batch.
func (j *jpegDevice) decode(images [][]byte, c, h, w int) error {
	slot := c * h * w
	if err := j.ready.Record(j.stream); err != nil {
		return err
	}
	var wg sync.WaitGroup
	per := (len(images) + len(j.parts) - 1) / len(j.parts)
	for k, part := range j.parts {
		lo, hi := min(k*per, len(images)), min((k+1)*per, len(images))
		part.err = nil
		if lo == hi {
			continue
		}
		wg.Go(func() {
			if part.err = part.stream.WaitEvent(j.ready); part.err != nil {
				return
			}
			out := j.images + cuda.DevicePtr(lo*slot)
			if part.err = part.dec.DecodeBatch(images[lo:hi], h, w, c, out, part.stream); part.err != nil {
				return
			}
			part.err = part.done.Record(part.stream)
		})
	}
	wg.Wait()
	var errs []error
	for k, part := range j.parts {
		if k*per < len(images) && part.err == nil {
			errs = append(errs, j.stream.WaitEvent(part.done))
		}
		errs = append(errs, part.err)
	}
	err := errors.Join(errs...)
	if errors.Is(err, cuda.ErrJPEGUnsupported) {
		return fmt.Errorf("%w: %w", errHostJPEG, err)
	}
	if err != nil {
		return fmt.Errorf("decoding the batch's JPEGs on the device: %w", err)
	}
	j.decoded.Add(1)
	return nil
}

// deviceShare is how many of a batch of n images nvJPEG decodes: half of
// the first batch, then what balance found, and at least one.
func (j *jpegDevice) deviceShare(n int) int {
	share := j.share
	if share == 0 {
		share = 0.5
	}
	return min(n, max(1, int(share*float64(n)+0.5)))
}

// balance sets the share for the next batch. nvJPEG's decoding slows the
// training on the same GPU, so it takes as little of the batch as keeps
// the layer from waiting for batches: while the layer waits, the share
// moves towards the one at which nvJPEG's k images and the host's m take
// the same time (going by this batch's times: the batch takes the longer
// of the two); while it does not, the share shrinks.
func (j *jpegDevice) balance(k, m int, device, host time.Duration) {
	if j.share == 0 {
		j.share = 0.5
	}
	waits := j.waits.Load()
	waited := waits != j.waited
	j.waited = waits
	switch {
	case !waited:
		j.share = max(0.01, j.share-0.005)
	case m == 0 || host <= 0: // no measure of the host: offer it some
		j.share = max(0.01, j.share*0.95)
	case k > 0 && device > 0:
		devRate, hostRate := float64(k)/device.Seconds(), float64(m)/host.Seconds()
		j.share = min(1, max(0.01, (j.share+devRate/(devRate+hostRate))/2))
	}
}

// hostSlots returns pinned memory for m images of slot bytes, after the
// previous batch's copy from it ends.
func (j *jpegDevice) hostSlots(m, slot int) ([]byte, error) {
	if j.uploading {
		j.uploading = false
		if err := j.uploaded.Synchronize(); err != nil {
			return nil, fmt.Errorf("waiting for the previous batch's images to reach the device: %w", err)
		}
	}
	if len(j.host) < m*slot {
		if err := j.dev.HostFree(j.host); err != nil {
			return nil, err
		}
		j.host = nil
		var err error
		if j.host, err = j.dev.HostAlloc(m * slot); err != nil {
			return nil, fmt.Errorf("pinned memory for the batch's images decoded on the host: %w", err)
		}
	}
	return j.host[:m*slot], nil
}

// upload queues on the prefetch stream the copy of the host's m images
// of slot bytes after nvJPEG's k.
func (j *jpegDevice) upload(k, m, slot int) error {
	if m == 0 {
		return nil
	}
	if err := j.dev.CopyHtoDAsync(j.images+cuda.DevicePtr(k*slot), j.host[:m*slot], j.stream); err != nil {
		return fmt.Errorf("copying the images decoded on the host to the device: %w", err)
	}
	if err := j.uploaded.Record(j.stream); err != nil {
		return err
	}
	j.uploading = true
	return nil
}

// reserve makes j.images hold at least n bytes, after the work queued on
// the prefetch stream and the parts' streams (which may use the old
// memory) ends.
func (j *jpegDevice) reserve(n int) error {
	if n <= j.capacity {
		return nil
	}
	if j.images != 0 {
		errs := []error{j.stream.Synchronize()}
		for _, part := range j.parts {
			errs = append(errs, part.stream.Synchronize())
		}
		if err := errors.Join(append(errs, j.dev.Free(j.images))...); err != nil {
			return err
		}
		j.images, j.capacity = 0, 0
	}
	p, err := j.dev.Alloc(n)
	if err != nil {
		return fmt.Errorf("device memory for the batch's decoded JPEGs: %w", err)
	}
	j.images, j.capacity = p, n
	return nil
}

// close frees the decoders and the images, after the work queued on the
// prefetch stream ends.
func (j *jpegDevice) close() error {
	errs := []error{closeParts(j.parts)}
	j.parts = nil
	for _, e := range []**cuda.Event{&j.ready, &j.uploaded} {
		if *e != nil {
			errs = append(errs, (*e).Synchronize(), (*e).Close())
			*e = nil
		}
	}
	if j.host != nil {
		errs = append(errs, j.dev.HostFree(j.host))
		j.host = nil
	}
	if j.images != 0 {
		errs = append(errs, j.stream.Synchronize(), j.dev.Free(j.images))
		j.images, j.capacity = 0, 0
	}
	return errors.Join(errs...)
}

// closeParts frees the decoders, events and streams of parts, after their
// work ends.
func closeParts(parts []*jpegPart) error {
	var errs []error
	for _, part := range parts {
		if part.dec != nil {
			errs = append(errs, part.dec.Close())
		}
		if part.done != nil {
			errs = append(errs, part.done.Close())
		}
		if part.stream != nil {
			errs = append(errs, part.stream.Synchronize(), part.stream.Close())
		}
	}
	return errors.Join(errs...)
}
