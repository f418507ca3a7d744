package datalayer

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/settings"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// In GPU mode a Data layer whose transformation is only crop, mirror,
// mean and scale (data.PixelArithmetic) of 8-bit images finishes it on
// the device: the prefetch goroutine decodes each image and draws its
// plan as ever, but copies only the planned window's bytes into pinned
// staging memory; the batch's push copies the staging to the device and
// runs transform_pixels (kernels/data_transform.cu) into the batch's data
// on the prefetch stream. The results are the host's to the bit (the same
// expression, in the same type), from a quarter of the host writes and of
// the bytes copied: for CaffeNet at 256, 40 MB a batch instead of 158.
//
// A batch with an item that cannot go that way (a float datum) is
// finished on the host, the staged items included (ApplyWindow).
// The DeviceTransform setting off (GOCAFFE_DEVICE_TRANSFORM=off) keeps
// every batch on the host.

// pixelStager is a batch loader that can stage windows for the device.
type pixelStager[T layer.Float] interface {
	// pixelArithmetic returns the transformation's arithmetic and the
	// item shape (channels, rows, columns), and false when its
	// transformation is more than that arithmetic.
	pixelArithmetic() (data.PixelArithmetic[T], [3]int, bool)
}

// pixelStaging is one batch's staging: in pinned host memory and on the
// device alike, the items' windows one after another, then three int32
// per item (mirrored, the window's row and column in its source).
type pixelStaging struct {
	host     []byte
	dev      cuda.DevicePtr
	items    int
	item     [3]int // channels, rows, columns
	paramsAt int    // where the int32s begin (a multiple of 16)
	// used: the loader staged the whole batch, and the device computes
	// the batch's data from the staging.
	used   bool
	staged []bool // by item, while the batch loads
	// jpeg is the prefetcher's nvJPEG decoder (nil unless GOCAFFE_JPEG=
	// nvjpeg, prefetch_jpeg.go); decoded, the rows and columns of the
	// batch's images when it decoded them, all of one size, into its
	// memory (the windows are then unused; params place them).
	jpeg    *jpegDevice
	decoded [2]int
}

// reset readies the staging for a new batch.
func (s *pixelStaging) reset() {
	s.used = true // until an item cannot be staged
	s.decoded = [2]int{}
	if len(s.staged) != s.items {
		s.staged = make([]bool, s.items)
	}
	clear(s.staged)
}

func (s *pixelStaging) itemBytes() int { return s.item[0] * s.item[1] * s.item[2] }

// window is item i's window in the host staging.
func (s *pixelStaging) window(i int) []byte {
	n := s.itemBytes()
	return s.host[i*n : (i+1)*n]
}

func (s *pixelStaging) params() []int32 {
	return unsafe.Slice((*int32)(unsafe.Pointer(&s.host[s.paramsAt])), 3*s.items)
}

// place records item i's placement.
func (s *pixelStaging) place(i int, plan data.TransformPlan) {
	mirror, hOff, wOff := plan.Placement()
	p := s.params()[3*i : 3*i+3]
	p[0], p[1], p[2] = int32(kit.Btoi(mirror)), int32(hOff), int32(wOff)
	s.staged[i] = true
}

// pixelDevice is a prefetcher's device side of the staging: the
// transformation's arithmetic, its mean blob and mean values on the
// device, and the kernel.
type pixelDevice[T layer.Float] struct {
	arith            data.PixelArithmetic[T]
	mean, meanValues cuda.DevicePtr
	kernel           *cuda.Function
	jpeg             *jpegDevice    // nil unless the JPEG setting is nvjpeg
	decodedKernel    *cuda.Function // transform_decoded, with jpeg
}

// deviceTransformOff reports whether ctx's settings keep transformations
// on the host (DeviceTransform off, GOCAFFE_DEVICE_TRANSFORM=off).
func deviceTransformOff(ctx *device.Context) bool {
	return ctx.Settings().DeviceTransform == settings.Off
}

// initPixels sets up the staging of p's batches when its loader can stage.
func initPixels[T layer.Float](p *prefetcher[T], ctx *device.Context) error {
	st, ok := p.loader.(pixelStager[T])
	if !ok || deviceTransformOff(ctx) {
		return nil
	}
	arith, item, ok := st.pixelArithmetic()
	if !ok {
		return nil
	}
	d := p.dev.dev
	pd := &pixelDevice[T]{arith: arith}
	p.dev.pixels = pd
	var err error
	if pd.kernel, err = kernel[T](ctx, "data_transform.cu", "transform_pixels"); err != nil {
		return err
	}
	if pd.mean, err = upload(d, arith.Mean); err != nil {
		return err
	}
	if pd.meanValues, err = upload(d, arith.MeanValues); err != nil {
		return err
	}
	if err := initDeviceJPEG(pd, p, ctx); err != nil {
		return err
	}
	for _, b := range p.batches {
		s := &pixelStaging{items: b.data.Shape()[0], item: item}
		s.paramsAt = (s.items*s.itemBytes() + 15) &^ 15
		size := s.paramsAt + 12*s.items
		if s.host, err = d.HostAlloc(size); err != nil {
			return fmt.Errorf("pinned staging for the device transformation: %w", err)
		}
		b.pix = s
		s.jpeg = pd.jpeg
		if s.dev, err = d.Alloc(size); err != nil {
			return fmt.Errorf("device staging for the device transformation: %w", err)
		}
		// The batch's device memory now, zeroed on the legacy stream and
		// waited for below, rather than at its first transformation
		// (transformOnDevice), where the prefetch stream would race the
		// zeroing and a wait might fall inside a CUDA graph's recording.
		if _, err := b.data.MutableGPUData(); err != nil {
			return err
		}
	}
	return d.Synchronize()
}

// initDeviceJPEG sets up the decoding of JPEGs on the device when ctx's
// JPEG setting (GOCAFFE_JPEG) asks for it.
func initDeviceJPEG[T layer.Float](pd *pixelDevice[T], p *prefetcher[T], ctx *device.Context) error {
	on, err := deviceJPEGOn(ctx)
	if err != nil || !on {
		return err
	}
	if pd.decodedKernel, err = kernel[T](ctx, "data_transform.cu", "transform_decoded"); err != nil {
		return err
	}
	pd.jpeg = &jpegDevice{dev: p.dev.dev, backend: ctx.Settings().NVJPEGBackend, stream: p.dev.stream, waits: &p.waits}
	return nil
}

// upload copies values to new device memory (0 for none).
func upload[T layer.Float](d *cuda.Device, values []T) (cuda.DevicePtr, error) {
	if len(values) == 0 {
		return 0, nil
	}
	n := len(values) * int(unsafe.Sizeof(values[0]))
	ptr, err := d.Alloc(n)
	if err != nil {
		return 0, err
	}
	return ptr, d.CopyHtoD(ptr, unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), n))
}

// transformOnDevice queues, on the prefetch stream, the copy of the
// batch's staging to the device and the transformation into its data.
// A batch decoded on the device needs only its params copied, and reads
// its images where they were decoded.
func transformOnDevice[T layer.Float](p *prefetcher[T], b *batch[T]) error {
	s, pd, d := b.pix, p.dev.pixels, p.dev.dev
	from := 0
	if s.decoded != [2]int{} {
		from = s.paramsAt
	}
	if err := d.CopyHtoDAsync(s.dev+cuda.DevicePtr(from), s.host[from:], p.dev.stream); err != nil {
		return fmt.Errorf("copying the batch's pixels to the device: %w", err)
	}
	fresh := b.data.Data().Head() == syncedmem.Uninitialized
	out, err := b.data.MutableGPUData()
	if err != nil {
		return err
	}
	if fresh {
		// The first device access zeroed the new memory on the legacy
		// stream, which the prefetch stream (non-blocking) is not ordered
		// with: the zeros could land after the kernel below (seen as a
		// first batch of zeros under load). initPixels allocates every
		// batch's memory ahead; a batch that grew since waits here.
		if err := d.Synchronize(); err != nil {
			return err
		}
	}
	n := b.data.Count()
	var a cuda.Args
	a.Int(n).Int(s.item[0]).Int(s.item[1]).Int(s.item[2])
	k := pd.kernel
	if s.decoded != [2]int{} {
		k = pd.decodedKernel
		a.Int(s.decoded[0]).Int(s.decoded[1]).Ptr(s.jpeg.images)
	} else {
		a.Ptr(s.dev)
	}
	a.Ptr(s.dev + cuda.DevicePtr(s.paramsAt))
	a.Ptr(pd.mean).Int(pd.arith.MeanShape[1]).Int(pd.arith.MeanShape[2]).Ptr(pd.meanValues).Int(len(pd.arith.MeanValues))
	kit.ScalarArg(&a, pd.arith.Scale).Ptr(out)
	if err := k.Launch(cuda.Dim3{X: mathfn.Blocks(n)}, cuda.Dim3{X: kit.ThreadsPerBlock}, 0, p.dev.stream, &a); err != nil {
		return fmt.Errorf("transforming the batch on the device: %w", err)
	}
	return nil
}

// closePixels frees the staging and the device copies of the mean.
func closePixels[T layer.Float](p *prefetcher[T]) error {
	d := p.dev.dev
	var errs []error
	for _, b := range p.batches {
		if s := b.pix; s != nil {
			if s.host != nil {
				errs = append(errs, d.HostFree(s.host))
			}
			if s.dev != 0 {
				errs = append(errs, d.Free(s.dev))
			}
			b.pix = nil
		}
	}
	if pd := p.dev.pixels; pd != nil {
		if pd.jpeg != nil {
			errs = append(errs, pd.jpeg.close())
		}
		for _, ptr := range []cuda.DevicePtr{pd.mean, pd.meanValues} {
			if ptr != 0 {
				errs = append(errs, d.Free(ptr))
			}
		}
		p.dev.pixels = nil
	}
	return errors.Join(errs...)
}
