package data

import "github.com/gocaffe/gocaffe/blob"

// A Data layer on a GPU can leave the arithmetic of a transformation to
// the device: the loader decodes each image, draws its plan (PlanImage, in
// the batch's order as always) and copies out only the planned window's
// bytes (Window); the device subtracts the mean, scales and mirrors as the
// plan says. The host then writes a quarter of the bytes it would (8-bit
// pixels, not 32-bit floats) and copies a quarter as many to the device.
// ApplyWindow is the same arithmetic on the host: the device kernel's
// twin, and the loader's fallback for a batch that cannot go that way.

// PixelArithmetic is what a transformation does to the pixels of a
// planned window: subtract the mean (Mean, the mean_file blob indexed at
// the source position, or MeanValues by channel, or nothing) and multiply
// by Scale.
type PixelArithmetic[T blob.Float] struct {
	Mean       []T    // nil without a mean_file
	MeanShape  [3]int // its channels, height and width (the source's)
	MeanValues []T    // repeated across the channels when fewer
	Scale      T
}

// PixelArithmetic returns the transformation's pixel arithmetic, and false
// when it does more than that arithmetic on a window (TSN's multi_scale
// resizes it, is_flow inverts mirrored channels).
func (t *Transformer[T]) PixelArithmetic() (PixelArithmetic[T], bool) {
	if t.multiScale || t.isFlow {
		return PixelArithmetic[T]{}, false
	}
	return PixelArithmetic[T]{Mean: t.mean, MeanShape: t.meanShape, MeanValues: t.meanValues, Scale: t.scale}, true
}

// Placement returns the plan's random choices: whether the window is
// mirrored, and its top-left corner in the source.
func (p TransformPlan) Placement() (mirror bool, hOff, wOff int) {
	return p.g.mirror, p.g.hOff, p.g.wOff
}

// WindowSize is the number of bytes Window writes: the output item's.
func (p TransformPlan) WindowSize() int { return p.g.c * p.g.oh * p.g.ow }

// FitsWindow reports whether the plan's work on raw is PixelArithmetic
// on a window that Window can copy: an 8-bit image, and a window that is
// not resized.
func (p TransformPlan) FitsWindow(raw *DatumRecord) bool {
	g := p.g
	return len(raw.Data) > 0 && g.winH == g.oh && g.winW == g.ow && !g.flow
}

// Window copies the planned window of the 8-bit image raw (channels,
// rows, columns; not mirrored) into dst, which must hold WindowSize
// bytes, and reports true; it copies nothing and reports false unless
// FitsWindow.
func (p TransformPlan) Window(raw *DatumRecord, dst []byte) bool {
	g := p.g
	if !p.FitsWindow(raw) {
		return false
	}
	for c := range g.c {
		for y := range g.oh {
			si := (c*g.h+g.hOff+y)*g.w + g.wOff
			copy(dst[(c*g.oh+y)*g.ow:(c*g.oh+y+1)*g.ow], raw.Data[si:si+g.ow])
		}
	}
	return true
}

// ApplyWindow writes into dst (channels x oh x ow values) the item that
// ApplyPlan would, from the window Window copied and the plan's placement:
// dst[c][y][x] = (window[c][y][x'] - mean) * scale, x' = x or, mirrored,
// ow-1-x, the mean the mean blob's at (c, hOff+y, wOff+x'), else the
// channel's mean value, else 0. The device kernel computes the same
// expression (layer/kernels/data_transform.cu).
func (a *PixelArithmetic[T]) ApplyWindow(window []byte, channels, oh, ow int, mirror bool, hOff, wOff int, dst []T) {
	for c := range channels {
		var mv T
		if len(a.MeanValues) > 0 {
			mv = a.MeanValues[c%len(a.MeanValues)]
		}
		for y := range oh {
			in := window[(c*oh+y)*ow : (c*oh+y+1)*ow]
			out := dst[(c*oh+y)*ow : (c*oh+y+1)*ow]
			var mean []T
			if a.Mean != nil {
				si := (c*a.MeanShape[1]+hOff+y)*a.MeanShape[2] + wOff
				mean = a.Mean[si : si+ow]
			}
			for x, v := range in {
				m := mv
				if mean != nil {
					m = mean[x]
				}
				if mirror {
					out[ow-1-x] = (T(v) - m) * a.Scale
				} else {
					out[x] = (T(v) - m) * a.Scale
				}
			}
		}
	}
}
