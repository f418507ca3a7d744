package vision

import (
	"github.com/gocaffe/gocaffe/cuda"
)

// trialMemory is device memory for timing a convolution's algorithms at
// set-up: an x, a w, a y and a gradient of x or of w, each
// 256-byte aligned as cuDNN's fastest kernels want, and a workspace.
//
// The algorithms are timed here rather than on the layer's own blobs
// because touching the blobs at set-up would give each one device memory
// of its own before the net's memory plan places it in the shared arena:
// every convolution's bottom and top at once, which set the set-up peak of
// a large batch far above what training holds (ResNet-50 FP32 at batch
// 564: 78.8 GB during set-up, 44.3 GB while training). The values do not
// matter to the timing (a GPU takes no longer over a NaN), so the memory
// is left as allocated.
type trialMemory struct {
	dev        *cuda.Device
	base, ws   cuda.DevicePtr
	x, w, y, d cuda.DevicePtr
}

// newTrialMemory allocates trial memory for tensors of xn, wn and yn
// elements of elem bytes and a workspace of wsBytes.
func newTrialMemory(dev *cuda.Device, elem, xn, wn, yn, wsBytes int) (*trialMemory, error) {
	const align = 256
	round := func(n int) int { return (n*elem + align - 1) / align * align }
	// The gradient holds a bottom's or, at least in FP32, a weight's: the
	// 16-bit pointwise way adds its weight gradient to the FP32 diff.
	grad := max(round(xn), (wn*max(elem, 4)+align-1)/align*align)
	total := round(xn) + round(wn) + round(yn) + grad + align
	base, err := dev.Alloc(total)
	if err != nil {
		return nil, err
	}
	ws, err := dev.Alloc(max(wsBytes, align))
	if err != nil {
		dev.Free(base)
		return nil, err
	}
	t := &trialMemory{dev: dev, base: base, ws: ws}
	p := (base + align - 1) &^ (align - 1)
	t.x, p = p, p+cuda.DevicePtr(round(xn))
	t.w, p = p, p+cuda.DevicePtr(round(wn))
	t.y, p = p, p+cuda.DevicePtr(round(yn))
	t.d = p
	return t, nil
}

// free releases the memory; the caller has synchronized the stream that
// used it.
func (t *trialMemory) free() {
	t.dev.Free(t.ws)
	t.dev.Free(t.base)
}
