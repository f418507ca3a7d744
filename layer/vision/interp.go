package vision

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Interp",
		New32: newInterp[float32], New64: newInterp[float64],
		Engines:  []layer.EngineDef{layer.GPUEngine(newInterpGPU[float32], newInterpGPU[float64])},
		ONNX:     layer.ONNXConverted,
		NoGolden: "BVLC Caffe has no such layer: it is PSPNet's (hszhao/PSPNet)",
	})
}

// Interp is the bilinear resizing of PSPNet's and DeepLab's Caffe
// (interp_param), corners aligned: output pixel (i, j) samples the input at
// (i * (H-1)/(H'-1), j * (W-1)/(W'-1)). The output size is height x width,
// or the input's shrunk ((size-1)/shrink_factor + 1), zoomed (size +
// (size-1)*(zoom_factor-1)), or shrunk then zoomed. pad_beg and pad_end,
// zero or negative, crop the input first.
type interpLayer[T layer.Float] struct {
	layer.Base[T]
	p                      *caffepb.InterpParameter
	padBeg, padEnd         int
	inH, inW, effH, effW   int
	outH, outW, planes     int
	rowWeights, colWeights []interpTap
}

// interpTap is one output row's (or column's) source: the first input row,
// the step to the second (0 at the last row) and the second's weight.
type interpTap struct {
	at, step int
	weight   float32
}

func newInterp[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &interpLayer[T]{p: p.GetInterpParam()}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	l.padBeg, l.padEnd = int(l.p.GetPadBeg()), int(l.p.GetPadEnd())
	if l.padBeg > 0 || l.padEnd > 0 {
		return nil, errors.New("interp_param: only non-positive padding (cropping) is supported, as in PSPNet")
	}
	return l, nil
}

// Type returns "Interp".
func (*interpLayer[T]) Type() string { return "Interp" }

// Counts: one bottom, one top.
func (*interpLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing more to set up.
func (*interpLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape computes the output size as PSPNet's layer does.
func (l *interpLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	b := bottom[0]
	if b.NumAxes() != 4 {
		return fmt.Errorf("bottom %s must be 4-D", b.ShapeString())
	}
	s := b.Shape()
	l.planes, l.inH, l.inW = s[0]*s[1], s[2], s[3]
	l.effH, l.effW = l.inH+l.padBeg+l.padEnd, l.inW+l.padBeg+l.padEnd
	p := l.p
	shrink := func(n int) int { return (n-1)/int(p.GetShrinkFactor()) + 1 }
	zoom := func(n int) int { return n + (n-1)*(int(p.GetZoomFactor())-1) }
	switch {
	case p.GetShrinkFactor() < 1 || p.GetZoomFactor() < 1:
		return errors.New("interp_param: shrink_factor and zoom_factor must be positive")
	case p.ShrinkFactor != nil && p.ZoomFactor == nil:
		l.outH, l.outW = shrink(l.effH), shrink(l.effW)
	case p.ZoomFactor != nil && p.ShrinkFactor == nil:
		l.outH, l.outW = zoom(l.effH), zoom(l.effW)
	case p.Height != nil && p.Width != nil:
		l.outH, l.outW = int(p.GetHeight()), int(p.GetWidth())
	case p.ShrinkFactor != nil && p.ZoomFactor != nil:
		l.outH, l.outW = zoom(shrink(l.effH)), zoom(shrink(l.effW))
	default:
		return errors.New("interp_param needs height and width, zoom_factor or shrink_factor")
	}
	if l.effH <= 0 || l.effW <= 0 || l.outH <= 0 || l.outW <= 0 {
		return fmt.Errorf("input %d x %d after cropping and output %d x %d must be positive", l.effH, l.effW, l.outH, l.outW)
	}
	// The top first: it refuses a size the process cannot hold (naming the
	// layer) before the taps, a table per output row and column, are made
	// for it.
	if err := top[0].Reshape([]int{s[0], s[1], l.outH, l.outW}); err != nil {
		return err
	}
	l.rowWeights, l.colWeights = interpTaps(l.effH, l.outH, -l.padBeg), interpTaps(l.effW, l.outW, -l.padBeg)
	return nil
}

// interpTaps computes, as PSPNet's caffe_cpu_interp2 in float32, each
// output index's two sources among in (starting at offset) for out outputs.
func interpTaps(in, out, offset int) []interpTap {
	taps := make([]interpTap, out)
	var ratio float32
	if out > 1 {
		ratio = float32(in-1) / float32(out-1)
	}
	for i := range taps {
		if in == out { // PSPNet copies
			taps[i] = interpTap{offset + i, 0, 0}
			continue
		}
		r := ratio * float32(i)
		at := int(r)
		step := 0
		if at < in-1 {
			step = 1
		}
		taps[i] = interpTap{offset + at, step, r - float32(at)}
	}
	return taps
}

// ForwardCPU interpolates each plane.
func (l *interpLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	in, out := l.inH*l.inW, l.outH*l.outW
	for p := range l.planes {
		src, dst := x[p*in:(p+1)*in], y[p*out:(p+1)*out]
		for i, r := range l.rowWeights {
			h1, h0 := T(r.weight), 1-T(r.weight)
			for j, c := range l.colWeights {
				w1, w0 := T(c.weight), 1-T(c.weight)
				a := r.at*l.inW + c.at
				b := a + r.step*l.inW
				dst[i*l.outW+j] = h0*(w0*src[a]+w1*src[a+c.step]) + h1*(w0*src[b]+w1*src[b+c.step])
			}
		}
	}
	return nil
}

// BackwardCPU spreads each output's gradient over its four sources.
func (l *interpLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	dx, dy := bottom[0].MutableCPUDiff(), top[0].CPUDiff()
	clear(dx)
	in, out := l.inH*l.inW, l.outH*l.outW
	for p := range l.planes {
		src, g := dx[p*in:(p+1)*in], dy[p*out:(p+1)*out]
		for i, r := range l.rowWeights {
			h1, h0 := T(r.weight), 1-T(r.weight)
			for j, c := range l.colWeights {
				w1, w0 := T(c.weight), 1-T(c.weight)
				a := r.at*l.inW + c.at
				b := a + r.step*l.inW
				d := g[i*l.outW+j]
				src[a] += h0 * w0 * d
				src[a+c.step] += h0 * w1 * d
				src[b] += h1 * w0 * d
				src[b+c.step] += h1 * w1 * d
			}
		}
	}
	return nil
}
