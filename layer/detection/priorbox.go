package detection

import (
	"errors"
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/syncedmem"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "PriorBox",
		New32: newPriorBox[float32], New64: newPriorBox[float64],
		ONNX:     layer.ONNXConverted,
		NoGolden: "BVLC Caffe has no such layer: it is SSD's (weiliu89/caffe)",
	})
}

// PriorBox is SSD's default-box generator (weiliu89/caffe;
// prior_box_param). For each position of its first bottom (a feature map)
// it writes num_priors boxes (xmin, ymin, xmax, ymax), normalized by the
// image's size (img_size, img_h/img_w, or the second bottom's plane):
// centred at ((w + offset) * step_w, (h + offset) * step_h), step defaulting
// to the image over the map; for each min_size a square of that side, a
// square of side sqrt(min_size * max_size) when max sizes are given, and a
// box min_size*sqrt(ar) wide and min_size/sqrt(ar) high for each other
// aspect ratio (and 1/ar with flip). The top is 1 x 2 x (4 * boxes): the
// boxes, clipped to [0, 1] with clip, then their variances (one value, or
// four repeated per box). As SSD's layer, sizes are truncated to integers
// before use (int min_size_ = min_sizes_[s]), so that the boxes are SSD's
// to the last bit. It has no backward pass.
type priorBoxLayer[T layer.Float] struct {
	layer.Base[T]
	minSizes, maxSizes, aspectRatios []float32
	variance                         []float32
	clip                             bool
	imgH, imgW                       int
	stepH, stepW, offset             float32
	numPriors                        int
	// made is what the last pass wrote its top for: the boxes depend on
	// the shapes alone, so a pass with the same shapes into the same
	// memory, unwritten since, has nothing to do.
	made priorsMade
}

// priorsMade is the top's memory, its write count after the pass wrote
// it, and the map's and image's sizes.
type priorsMade struct {
	mem                    *syncedmem.SyncedMemory
	writes                 uint64
	mapH, mapW, imgH, imgW int
}

func newPriorBox[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &priorBoxLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	if err := l.readParam(p.GetPriorBoxParam()); err != nil {
		return nil, err
	}
	return l, nil
}

// readParam reads and checks prior_box_param as SSD's LayerSetUp does.
func (l *priorBoxLayer[T]) readParam(pp *caffepb.PriorBoxParameter) error {
	if len(pp.GetMinSize()) == 0 {
		return errors.New("must provide min_size")
	}
	for _, s := range pp.GetMinSize() {
		if !(s > 0) {
			return fmt.Errorf("min_size must be positive, got %v", s)
		}
	}
	l.minSizes = pp.GetMinSize()
	l.aspectRatios = []float32{1}
	for _, ar := range pp.GetAspectRatio() {
		dup := false
		for _, have := range l.aspectRatios {
			dup = dup || math.Abs(float64(ar-have)) < 1e-6
		}
		if dup {
			continue
		}
		if !(ar > 0) {
			return fmt.Errorf("aspect_ratio must be positive, got %v", ar)
		}
		l.aspectRatios = append(l.aspectRatios, ar)
		if pp.GetFlip() {
			l.aspectRatios = append(l.aspectRatios, 1/ar)
		}
	}
	l.numPriors = len(l.aspectRatios) * len(l.minSizes)
	if maxSizes := pp.GetMaxSize(); len(maxSizes) > 0 {
		if len(maxSizes) != len(l.minSizes) {
			return fmt.Errorf("%d max_size values for %d min_size values: give one for each or none", len(maxSizes), len(l.minSizes))
		}
		for i, m := range maxSizes {
			if !(m > l.minSizes[i]) {
				return fmt.Errorf("max_size %v must be greater than min_size %v", m, l.minSizes[i])
			}
		}
		l.maxSizes = maxSizes
		l.numPriors += len(maxSizes)
	}
	l.clip = pp.GetClip()
	switch v := pp.GetVariance(); len(v) {
	case 0:
		l.variance = []float32{0.1}
	case 1, 4:
		for _, x := range v {
			if !(x > 0) {
				return fmt.Errorf("variance must be positive, got %v", x)
			}
		}
		l.variance = v
	default:
		return fmt.Errorf("give one variance or four, got %d", len(v))
	}
	switch {
	case pp.ImgH != nil || pp.ImgW != nil:
		if pp.ImgSize != nil {
			return errors.New("either img_size or img_h/img_w should be specified; not both")
		}
		l.imgH, l.imgW = int(pp.GetImgH()), int(pp.GetImgW())
		if l.imgH <= 0 || l.imgW <= 0 {
			return fmt.Errorf("img_h and img_w must be positive, got %d x %d", l.imgH, l.imgW)
		}
	case pp.ImgSize != nil:
		l.imgH, l.imgW = int(pp.GetImgSize()), int(pp.GetImgSize())
		if l.imgH <= 0 {
			return errors.New("img_size must be positive")
		}
	}
	switch {
	case pp.StepH != nil || pp.StepW != nil:
		if pp.Step != nil {
			return errors.New("either step or step_h/step_w should be specified; not both")
		}
		l.stepH, l.stepW = pp.GetStepH(), pp.GetStepW()
		if !(l.stepH > 0 && l.stepW > 0) {
			return fmt.Errorf("step_h and step_w must be positive, got %v x %v", l.stepH, l.stepW)
		}
	case pp.Step != nil:
		l.stepH, l.stepW = pp.GetStep(), pp.GetStep()
		if !(l.stepH > 0) {
			return errors.New("step must be positive")
		}
	}
	l.offset = pp.GetOffset()
	return nil
}

// Type returns "PriorBox".
func (*priorBoxLayer[T]) Type() string { return "PriorBox" }

// Counts: the feature map and the image (whose plane sizes the boxes when
// the parameters do not).
func (*priorBoxLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(2), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing more to set up.
func (*priorBoxLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape sizes the top: 1 x 2 x (map positions * boxes * 4).
func (l *priorBoxLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	for i, b := range bottom {
		if b.NumAxes() != 4 {
			return fmt.Errorf("bottom %d %s must be 4-D (num, channels, height, width)", i, b.ShapeString())
		}
	}
	s := bottom[0].Shape()
	return top[0].Reshape([]int{1, 2, s[2] * s[3] * l.numPriors * 4})
}

// KeepsTops says the top's data holds from one pass to the next
// (layer.TopKeeper): ForwardCPU writes it once per shape.
func (*priorBoxLayer[T]) KeepsTops() bool { return true }

// ForwardCPU writes the boxes and their variances, unless the top holds
// them already: the same shapes as the last pass's, into the same
// memory, of the top's alone (not shared: a net's memory plan places
// other blobs' data in views of one arena, whose writes this one's count
// does not see), not written since.
func (l *priorBoxLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	mapH, mapW := bottom[0].Shape()[2], bottom[0].Shape()[3]
	imgH, imgW := l.imgH, l.imgW
	if imgH == 0 || imgW == 0 {
		imgH, imgW = bottom[1].Shape()[2], bottom[1].Shape()[3]
	}
	made := priorsMade{mem: top[0].Data(), mapH: mapH, mapW: mapW, imgH: imgH, imgW: imgW}
	if made.mem != nil {
		made.writes = made.mem.Writes()
	}
	if made.mem != nil && !made.mem.Shared() && made == l.made {
		return nil
	}
	l.writePriors(top[0].MutableCPUData(), mapH, mapW, imgH, imgW)
	made.mem = top[0].Data()
	made.writes = made.mem.Writes()
	l.made = made
	return nil
}

// writePriors writes the boxes of a mapH x mapW map on an imgH x imgW
// image and their variances into out.
func (l *priorBoxLayer[T]) writePriors(out []T, mapH, mapW, imgH, imgW int) {
	stepH, stepW := l.stepH, l.stepW
	if stepH == 0 || stepW == 0 {
		stepH, stepW = float32(imgH)/float32(mapH), float32(imgW)/float32(mapW)
	}
	dim := mapH * mapW * l.numPriors * 4
	boxes, idx := out[:dim], 0
	put := func(cx, cy, bw, bh float32) {
		// SSD computes in double from float centres and sizes.
		x, y, w, h := float64(cx), float64(cy), float64(bw), float64(bh)
		boxes[idx] = T((x - w/2) / float64(imgW))
		boxes[idx+1] = T((y - h/2) / float64(imgH))
		boxes[idx+2] = T((x + w/2) / float64(imgW))
		boxes[idx+3] = T((y + h/2) / float64(imgH))
		idx += 4
	}
	for h := range mapH {
		for w := range mapW {
			cx, cy := (float32(w)+l.offset)*stepW, (float32(h)+l.offset)*stepH
			for s, fmin := range l.minSizes {
				minSize := int(fmin) // SSD's truncation
				put(cx, cy, float32(minSize), float32(minSize))
				if len(l.maxSizes) > 0 {
					side := float32(math.Sqrt(float64(minSize * int(l.maxSizes[s]))))
					put(cx, cy, side, side)
				}
				for _, ar := range l.aspectRatios {
					if math.Abs(float64(ar)-1) < 1e-6 {
						continue
					}
					r := float32(math.Sqrt(float64(ar)))
					put(cx, cy, float32(minSize)*r, float32(minSize)/r)
				}
			}
		}
	}
	if l.clip {
		for i, v := range boxes {
			boxes[i] = min(max(v, 0), 1)
		}
	}
	variances := out[dim:]
	for i := range variances {
		variances[i] = T(l.variance[i%len(l.variance)])
	}
}

// BackwardCPU does nothing: the boxes depend on shapes only.
func (*priorBoxLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
