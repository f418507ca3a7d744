package data

import (
	"errors"
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Augmenter is SSD's DataTransformer for annotated images (weiliu89/caffe,
// the AnnotatedData layer): on top of a Transformer's crop, mirror, mean
// and scale it applies, in SSD's order,
//
//  1. distort_param: random brightness, contrast, saturation and hue
//     changes and a random channel order, in one of SSD's two orders;
//  2. expand_param: the image placed at random on a canvas up to
//     max_expand_ratio times larger, filled with the mean values;
//  3. batch_sampler (from annotated_data_param): random windows that meet
//     each sampler's overlap constraints with the objects; one of all the
//     windows found is cropped;
//  4. resize_param: WARP, FIT_SMALL_SIZE or FIT_LARGE_SIZE_AND_PAD to its
//     height and width, with an interpolation drawn from interp_mode;
//  5. crop_size (or crop_h x crop_w) and mirror, then mean and scale,
//
// and moves the object boxes with the image, dropping those that leave it
// (and, with emit_constraint, those whose centre or overlap the crop does
// not keep).
//
// As with Transformer, Plan draws one image's random choices in order and
// Apply does the pixel work, so that images can be augmented on several
// goroutines while a seed still gives the same batches.
//
// Where SSD differs: it applies distort_param to encoded images only (with
// raw ones it logs an error and goes on), and it re-encodes an encoded
// image as JPEG after each of steps 1 to 3; here every step works on the
// decoded pixels, raw or encoded. noise_param is not implemented: setting
// any of its operations is an error.
type Augmenter[T blob.Float] struct {
	tf           *Transformer[T]
	cropH, cropW int
	resize       *caffepb.ResizeParameter
	distort      *caffepb.DistortionParameter
	expand       *caffepb.ExpansionParameter
	emit         *caffepb.EmitConstraint
	samplers     []*caffepb.BatchSampler
	sampled      []BBox // GenerateBatchSamples' windows, reused
}

// NewAugmenter makes an augmenter for the transformation p and the batch
// samplers of an AnnotatedData layer, with seed for its random choices.
func NewAugmenter[T blob.Float](p *caffepb.TransformationParameter, samplers []*caffepb.BatchSampler, phase caffepb.Phase, seed uint64) (*Augmenter[T], error) {
	tf, err := NewTransformer[T](p, phase, seed)
	if err != nil {
		return nil, err
	}
	a := &Augmenter[T]{tf: tf, cropH: int(p.GetCropH()), cropW: int(p.GetCropW()), samplers: samplers,
		resize: p.GetResizeParam(), distort: p.GetDistortParam(), expand: p.GetExpandParam(), emit: p.GetEmitConstraint()}
	if c := int(p.GetCropSize()); c > 0 {
		a.cropH, a.cropW = c, c
	}
	if err := a.check(p); err != nil {
		return nil, fmt.Errorf("transform_param: %w", err)
	}
	return a, nil
}

// Transformer is the underlying transformer (mean, scale, colour mode).
func (a *Augmenter[T]) Transformer() *Transformer[T] { return a.tf }

func (a *Augmenter[T]) check(p *caffepb.TransformationParameter) error {
	if r := a.resize; r != nil && (r.GetHeight() == 0 || r.GetWidth() == 0) {
		return fmt.Errorf("resize_param: height %d and width %d must both be positive", r.GetHeight(), r.GetWidth())
	}
	if e := a.expand; e != nil && e.GetMaxExpandRatio() < 1 {
		return fmt.Errorf("expand_param: max_expand_ratio %g must be at least 1", e.GetMaxExpandRatio())
	}
	if a.expand != nil && a.tf.mean != nil {
		return errors.New("expand_param with mean_file: the mean would have to match every expanded size; use mean_value")
	}
	if (a.cropH > 0) != (a.cropW > 0) {
		return fmt.Errorf("crop_h %d and crop_w %d: give both, or crop_size", a.cropH, a.cropW)
	}
	if d := a.distort; d != nil {
		if d.GetBrightnessDelta() < 0 || d.GetHueDelta() < 0 {
			return errors.New("distort_param: brightness_delta and hue_delta must not be negative")
		}
		if d.GetContrastLower() < 0 || d.GetContrastUpper() < d.GetContrastLower() ||
			d.GetSaturationLower() < 0 || d.GetSaturationUpper() < d.GetSaturationLower() {
			return errors.New("distort_param: want 0 <= contrast_lower <= contrast_upper and 0 <= saturation_lower <= saturation_upper")
		}
	}
	if n := p.GetNoiseParam(); n != nil {
		if n.GetHistEq() || n.GetInverse() || n.GetDecolorize() || n.GetGaussBlur() || n.GetJpeg() > 0 || n.GetPosterize() ||
			n.GetErode() || n.GetSaltpepper() || n.GetClahe() || n.GetConvertToHsv() || n.GetConvertToLab() {
			return errors.New("noise_param: gocaffe does not implement SSD's noise operations (hist_eq, inverse, decolorize, gauss_blur, jpeg, posterize, erode, saltpepper, clahe, convert_to_hsv, convert_to_lab)")
		}
	}
	for i, s := range a.samplers {
		sm := s.GetSampler()
		if sm.GetMinScale() <= 0 || sm.GetMaxScale() > 1 || sm.GetMaxScale() < sm.GetMinScale() ||
			sm.GetMinAspectRatio() <= 0 || sm.GetMaxAspectRatio() < sm.GetMinAspectRatio() || math.IsInf(float64(sm.GetMaxAspectRatio()), 0) {
			return fmt.Errorf("batch_sampler %d: want 0 < min_scale <= max_scale <= 1 and 0 < min_aspect_ratio <= max_aspect_ratio (got scale %g..%g, aspect ratio %g..%g)",
				i+1, sm.GetMinScale(), sm.GetMaxScale(), sm.GetMinAspectRatio(), sm.GetMaxAspectRatio())
		}
	}
	return nil
}

// OutputShape is the (channels, height, width) an image of c x h x w
// pixels becomes when no window is sampled (SSD's InferBlobShape).
func (a *Augmenter[T]) OutputShape(c, h, w int) (int, int, int, error) {
	h, w = a.resizedSize(h, w)
	if a.cropH > 0 {
		if h < a.cropH || w < a.cropW {
			return 0, 0, 0, fmt.Errorf("crop %dx%d is larger than the image (%dx%d after any resize)", a.cropH, a.cropW, h, w)
		}
		h, w = a.cropH, a.cropW
	}
	return c, h, w, nil
}

// resizedSize is the size resize_param gives an h x w image (SSD's
// InferNewSize).
func (a *Augmenter[T]) resizedSize(h, w int) (int, int) {
	r := a.resize
	if r == nil {
		return h, w
	}
	nh, nw := int(r.GetHeight()), int(r.GetWidth())
	if r.GetResizeMode() == caffepb.ResizeParameter_FIT_SMALL_SIZE {
		aspect := float32(w) / float32(h)
		if aspect < float32(nw)/float32(nh) {
			nh = int(float32(nw) / aspect)
		} else {
			nw = int(aspect * float32(nh))
		}
	}
	return nh, nw
}

// AugmentPlan is one image's random choices and the boxes they give.
type AugmentPlan struct {
	// Objects are the image's objects after augmentation, boxes relative
	// to the output image.
	Objects []Object
	// Channels, Height and Width are the output's shape.
	Channels, Height, Width int

	distort distortPlan
	// The image lies at (offY, offX) of a canvas of canvasH x canvasW
	// (itself when not expanded); the window (winY, winX, winH, winW) of
	// the canvas is cut out, resized to resH x resW (inside a padded
	// fitH x fitW for FIT_LARGE_SIZE_AND_PAD) and cropped as g says.
	canvasH, canvasW, offY, offX int
	winY, winX, winH, winW       int
	interp                       caffepb.ResizeParameter_InterpMode
	resH, resW                   int
	padTop, padLeft, fitH, fitW  int
	g                            planeGeometry
}

func (a *Augmenter[T]) uniform(lo, hi float32) float32 {
	return lo + (hi-lo)*float32(a.tf.rng.Float64())
}

// Plan draws the random choices for the decoded image img (raw, 8-bit) with
// objects objs, in SSD's order, into p.
func (a *Augmenter[T]) Plan(img *DatumRecord, objs []Object, p *AugmentPlan) error {
	c, h, w, err := img.Shape()
	if err != nil {
		return err
	}
	if len(img.Data) == 0 && (a.distort != nil || a.expand != nil || len(a.samplers) > 0 || a.resize != nil) {
		return errors.New("SSD's augmentation (distort_param, expand_param, batch_sampler, resize_param) works on 8-bit images; this datum holds float_data")
	}
	p.Objects = append(p.Objects[:0], objs...)
	p.distort = distortPlan{}
	if a.distort != nil {
		a.planDistort(c, &p.distort)
	}
	p.canvasH, p.canvasW, p.offY, p.offX = h, w, 0, 0
	if a.expand != nil {
		a.planExpand(h, w, p)
	}
	p.winY, p.winX, p.winH, p.winW = 0, 0, p.canvasH, p.canvasW
	if len(a.samplers) > 0 {
		a.planSample(p)
	}
	return a.planFinal(c, p)
}

// planExpand is SSD's ExpandImage: with probability prob, a ratio in
// [1, max_expand_ratio] and a random whole-pixel place on the canvas.
func (a *Augmenter[T]) planExpand(h, w int, p *AugmentPlan) {
	e := a.expand
	if a.uniform(0, 1) > e.GetProb() {
		return
	}
	if math.Abs(float64(e.GetMaxExpandRatio())-1) < 1e-2 {
		return
	}
	ratio := a.uniform(1, e.GetMaxExpandRatio())
	ch, cw := int(float32(h)*ratio), int(float32(w)*ratio)
	offY := float32(math.Floor(float64(a.uniform(0, float32(ch-h)))))
	offX := float32(math.Floor(float64(a.uniform(0, float32(cw-w)))))
	box := BBox{XMin: -offX / float32(w), YMin: -offY / float32(h), XMax: (float32(cw) - offX) / float32(w), YMax: (float32(ch) - offY) / float32(h)}
	p.Objects = a.moveObjects(p.Objects, box, false, false, h, w)
	p.canvasH, p.canvasW, p.offY, p.offX = ch, cw, int(offY), int(offX)
}

// planSample is SSD's GenerateBatchSamples and CropImage: every sampler
// contributes the windows it finds; one of them, at random, is cut out.
func (a *Augmenter[T]) planSample(p *AugmentPlan) {
	a.sampled = a.sampled[:0]
	for _, s := range a.samplers {
		if s.GetUseOriginalImage() {
			a.generateSamples(s, p.Objects)
		}
	}
	if len(a.sampled) == 0 {
		return
	}
	box := a.sampled[a.tf.rng.IntN(len(a.sampled))].Clip()
	fh, fw := float32(p.canvasH), float32(p.canvasW)
	x0, y0 := box.XMin*fw, box.YMin*fh
	p.winX, p.winY = int(x0), int(y0)
	p.winW, p.winH = max(1, int(box.XMax*fw-x0)), max(1, int(box.YMax*fh-y0))
	p.winW, p.winH = min(p.winW, p.canvasW-p.winX), min(p.winH, p.canvasH-p.winY)
	// The boxes move with the whole-pixel window actually cut (SSD moves
	// them with the sampled box, up to two pixels off the pixels).
	cut := BBox{XMin: float32(p.winX) / fw, YMin: float32(p.winY) / fh, XMax: float32(p.winX+p.winW) / fw, YMax: float32(p.winY+p.winH) / fh}
	p.Objects = a.moveObjects(p.Objects, cut, false, false, p.canvasH, p.canvasW)
}

// generateSamples tries max_trials windows of one sampler, keeping those
// that meet its constraint, up to max_sample of them.
func (a *Augmenter[T]) generateSamples(s *caffepb.BatchSampler, objs []Object) {
	found := 0
	for range s.GetMaxTrials() {
		if s.MaxSample != nil && found >= int(s.GetMaxSample()) {
			break
		}
		box := a.sampleBox(s.GetSampler())
		if satisfiesSampleConstraint(box, objs, s.GetSampleConstraint()) {
			found++
			a.sampled = append(a.sampled, box)
		}
	}
}

// sampleBox draws a window of the unit square with a scale and an aspect
// ratio in the sampler's ranges (SSD's SampleBBox).
func (a *Augmenter[T]) sampleBox(s *caffepb.Sampler) BBox {
	scale := a.uniform(s.GetMinScale(), s.GetMaxScale())
	aspect := a.uniform(s.GetMinAspectRatio(), s.GetMaxAspectRatio())
	aspect = max(aspect, scale*scale)
	aspect = min(aspect, 1/(scale*scale))
	sq := float32(math.Sqrt(float64(aspect)))
	bw, bh := scale*sq, scale/sq
	x := a.uniform(0, 1-bw)
	y := a.uniform(0, 1-bh)
	return BBox{XMin: x, YMin: y, XMax: x + bw, YMax: y + bh}
}

// satisfiesSampleConstraint is SSD's SatisfySampleConstraint, its quirk
// included: once an object passes a test that is present, later objects
// that fail another test no longer make the window fail.
func satisfiesSampleConstraint(box BBox, objs []Object, c *caffepb.SampleConstraint) bool {
	if c == nil {
		return true
	}
	hasJaccard := c.MinJaccardOverlap != nil || c.MaxJaccardOverlap != nil
	hasSample := c.MinSampleCoverage != nil || c.MaxSampleCoverage != nil
	hasObject := c.MinObjectCoverage != nil || c.MaxObjectCoverage != nil
	if !hasJaccard && !hasSample && !hasObject {
		return true
	}
	outside := func(v float32, lo, hi *float32) bool { return (lo != nil && v < *lo) || (hi != nil && v > *hi) }
	found := false
	for _, o := range objs {
		if hasJaccard {
			if outside(Jaccard(box, o.Box), c.MinJaccardOverlap, c.MaxJaccardOverlap) {
				continue
			}
			found = true
		}
		if hasSample {
			if outside(box.Coverage(o.Box), c.MinSampleCoverage, c.MaxSampleCoverage) {
				continue
			}
			found = true
		}
		if hasObject {
			if outside(o.Box.Coverage(box), c.MinObjectCoverage, c.MaxObjectCoverage) {
				continue
			}
			found = true
		}
		if found {
			return true
		}
	}
	return found
}

// planFinal draws the mirror, the interpolation and the crop of the window
// (SSD's Transform of a cv::Mat) and moves the boxes into the output.
func (a *Augmenter[T]) planFinal(c int, p *AugmentPlan) error {
	mirror := a.tf.mirror && a.tf.rng.IntN(2) == 1
	p.interp = caffepb.ResizeParameter_LINEAR
	if r := a.resize; r != nil && len(r.GetInterpMode()) > 0 {
		p.interp = r.GetInterpMode()[a.tf.rng.IntN(len(r.GetInterpMode()))]
	}
	p.resH, p.resW = a.resizedSize(p.winH, p.winW)
	p.fitH, p.fitW, p.padTop, p.padLeft = p.resH, p.resW, 0, 0
	if r := a.resize; r != nil && r.GetResizeMode() == caffepb.ResizeParameter_FIT_LARGE_SIZE_AND_PAD {
		a.planFit(p)
	}
	g := planeGeometry{c: c, h: p.resH, w: p.resW, oh: p.resH, ow: p.resW, mirror: mirror}
	if a.cropH > 0 {
		if p.resH < a.cropH || p.resW < a.cropW {
			return fmt.Errorf("crop %dx%d is larger than the image (%dx%d after sampling and resizing)", a.cropH, a.cropW, p.resH, p.resW)
		}
		g.oh, g.ow = a.cropH, a.cropW
		if a.tf.phase == caffepb.Phase_TRAIN {
			g.hOff = a.tf.rng.IntN(p.resH - a.cropH + 1)
			g.wOff = a.tf.rng.IntN(p.resW - a.cropW + 1)
		} else {
			g.hOff, g.wOff = (p.resH-a.cropH)/2, (p.resW-a.cropW)/2
		}
	}
	if a.tf.mean != nil && a.tf.meanShape != [3]int{c, p.resH, p.resW} {
		return fmt.Errorf("the mean in mean_file %s has shape %dx%dx%d, the image %dx%dx%d before cropping: they must be equal",
			a.tf.meanFile, a.tf.meanShape[0], a.tf.meanShape[1], a.tf.meanShape[2], c, p.resH, p.resW)
	}
	if n := len(a.tf.meanValues); n > 1 && n != c {
		return fmt.Errorf("specify either 1 mean_value or as many as channels: %d (got %d)", c, n)
	}
	p.g = g
	p.Channels, p.Height, p.Width = c, g.oh, g.ow
	rh, rw := float32(p.resH), float32(p.resW)
	crop := BBox{XMin: float32(g.wOff) / rw, YMin: float32(g.hOff) / rh, XMax: float32(g.wOff+g.ow) / rw, YMax: float32(g.hOff+g.oh) / rh}
	p.Objects = a.moveObjects(p.Objects, crop, true, mirror, p.winH, p.winW)
	return nil
}

// planFit sizes FIT_LARGE_SIZE_AND_PAD's resize: the whole window, its
// aspect kept, inside resize_param's size, centred between pads.
func (a *Augmenter[T]) planFit(p *AugmentPlan) {
	nh, nw := int(a.resize.GetHeight()), int(a.resize.GetWidth())
	aspect := float32(p.winW) / float32(p.winH)
	if aspect > float32(nw)/float32(nh) {
		p.fitH, p.fitW = max(1, int(math.Floor(float64(float32(nw)/aspect)))), nw
		p.padTop = (nh - p.fitH) / 2
	} else {
		p.fitH, p.fitW = nh, max(1, int(math.Floor(float64(aspect*float32(nh)))))
		p.padLeft = (nw - p.fitW) / 2
	}
	p.resH, p.resW = nh, nw
}

// moveObjects is SSD's TransformAnnotation: each box is mapped through the
// resize policy (withResize), kept only when it meets the emit constraint
// and overlaps the window crop, projected into the window and mirrored.
// imgH x imgW is the size of the image the boxes are relative to. It
// filters objs in place.
func (a *Augmenter[T]) moveObjects(objs []Object, crop BBox, withResize, mirror bool, imgH, imgW int) []Object {
	out := objs[:0]
	for _, o := range objs {
		b := o.Box
		if withResize && a.resize != nil {
			b = resizedBox(a.resize, imgW, imgH, b)
		}
		if a.emit != nil && !meetsEmitConstraint(crop, b, a.emit) {
			continue
		}
		pb, ok := crop.Project(b)
		if !ok {
			continue
		}
		if mirror {
			pb.XMin, pb.XMax = 1-pb.XMax, 1-pb.XMin
		}
		if withResize && a.resize != nil {
			pb = extrapolateBox(a.resize, imgH, imgW, crop, pb)
		}
		out = append(out, Object{Label: o.Label, Instance: o.Instance, Box: pb})
	}
	return out
}

// resizedBox is SSD's UpdateBBoxByResizePolicy: the box of an oldW x oldH
// image moved as resize_param moves the pixels.
func resizedBox(r *caffepb.ResizeParameter, oldW, oldH int, b BBox) BBox {
	nh, nw := float32(r.GetHeight()), float32(r.GetWidth())
	ow, oh := float32(oldW), float32(oldH)
	aspect := ow / oh
	x0, y0, x1, y1 := b.XMin*ow, b.YMin*oh, b.XMax*ow, b.YMax*oh
	switch r.GetResizeMode() {
	case caffepb.ResizeParameter_FIT_LARGE_SIZE_AND_PAD:
		if aspect > nw/nh {
			pad := (nh - nw/aspect) / 2
			x0, x1 = max(0, x0*nw/ow), min(nw, x1*nw/ow)
			y0 = pad + max(0, y0*(nh-2*pad)/oh)
			y1 = pad + min(nh, y1*(nh-2*pad)/oh)
		} else {
			pad := (nw - aspect*nh) / 2
			x0 = pad + max(0, x0*(nw-2*pad)/ow)
			x1 = pad + min(nw, x1*(nw-2*pad)/ow)
			y0, y1 = max(0, y0*nh/oh), min(nh, y1*nh/oh)
		}
	case caffepb.ResizeParameter_FIT_SMALL_SIZE:
		if aspect < nw/nh {
			nh = nw / aspect
		} else {
			nw = aspect * nh
		}
		fallthrough
	default: // WARP
		x0, x1 = max(0, x0*nw/ow), min(nw, x1*nw/ow)
		y0, y1 = max(0, y0*nh/oh), min(nh, y1*nh/oh)
	}
	return BBox{XMin: x0 / nw, YMin: y0 / nh, XMax: x1 / nw, YMax: y1 / nh, Difficult: b.Difficult}
}

// extrapolateBox is SSD's ExtrapolateBBox: with FIT_SMALL_SIZE and
// height_scale/width_scale, boxes are rescaled from the crop to that
// scale.
func extrapolateBox(r *caffepb.ResizeParameter, h, w int, crop, b BBox) BBox {
	hs, ws := float32(r.GetHeightScale()), float32(r.GetWidthScale())
	if hs <= 0 || ws <= 0 || r.GetResizeMode() != caffepb.ResizeParameter_FIT_SMALL_SIZE {
		return b
	}
	aspect := float32(w) / float32(h)
	rh, rw := float32(r.GetHeight()), float32(r.GetWidth())
	if aspect < rw/rh {
		rh = rw / aspect
	} else {
		rw = rh * aspect
	}
	cropH, cropW := rh*(crop.YMax-crop.YMin), rw*(crop.XMax-crop.XMin)
	b.XMin, b.XMax = b.XMin*cropW/ws, b.XMax*cropW/ws
	b.YMin, b.YMax = b.YMin*cropH/hs, b.YMax*cropH/hs
	return b
}

// AugmentScratch is the memory one goroutine's Apply works in; keep one
// per concurrent Apply and reuse it.
type AugmentScratch struct {
	distorted, window, resized, fitted []byte
	reorder                            []byte // the distortion's channel reordering
	rs                                 Resampler
}

// Apply writes the augmented image img (the one p was planned for) into
// dst, which holds p.Channels x p.Height x p.Width values. Calls with
// different scratch may run concurrently.
func (a *Augmenter[T]) Apply(img *DatumRecord, p *AugmentPlan, dst []T, s *AugmentScratch) error {
	if len(dst) != p.Channels*p.Height*p.Width {
		return fmt.Errorf("augmented image of %dx%dx%d values, but the output item holds %d", p.Channels, p.Height, p.Width, len(dst))
	}
	if len(img.Data) == 0 { // float datum: crop, mirror, mean and scale only
		transformPlanes(img.FloatData, dst, p.g, a.tf.mean, a.tf.meanValues, a.tf.scale)
		return nil
	}
	c, h, w := img.Channels, img.Height, img.Width
	pix := img.Data
	if p.distort.n > 0 {
		s.distorted = append(s.distorted[:0], pix...)
		s.reorder = p.distort.apply(s.distorted, c, h*w, s.reorder)
		pix = s.distorted
	}
	if p.winH != h || p.winW != w || p.canvasH != h || p.canvasW != w {
		s.window = grown(s.window, c*p.winH*p.winW)
		a.cutWindow(s.window, pix, c, h, w, p)
		pix = s.window
	}
	var err error
	if p.fitH != p.winH || p.fitW != p.winW {
		if s.resized, err = s.rs.Resize(p.interp, s.resized, pix, c, p.winH, p.winW, p.fitH, p.fitW); err != nil {
			return err
		}
		pix = s.resized
	}
	if p.fitH != p.resH || p.fitW != p.resW {
		s.fitted = grown(s.fitted, c*p.resH*p.resW)
		a.pad(s.fitted, pix, c, p)
		pix = s.fitted
	}
	transformPixels(pix, dst, p.g, a.tf.mean, a.tf.meanValues, a.tf.scale)
	return nil
}

// fillValue is the value of channel ch on an expanded canvas outside the
// image: the channel's mean value (rounded to a byte, as OpenCV stores
// it), else 0, so that the mean subtraction leaves 0 there.
func (a *Augmenter[T]) fillValue(ch int) byte {
	mv := a.tf.meanValues
	if len(mv) == 0 {
		return 0
	}
	return saturateByte(float32(mv[min(ch, len(mv)-1)]))
}

// cutWindow copies the window of the (expanded) canvas into out.
func (a *Augmenter[T]) cutWindow(out, pix []byte, c, h, w int, p *AugmentPlan) {
	for ch := range c {
		fill := a.fillValue(ch)
		plane := pix[ch*h*w : (ch+1)*h*w]
		for y := range p.winH {
			row := out[(ch*p.winH+y)*p.winW : (ch*p.winH+y+1)*p.winW]
			sy := p.winY + y - p.offY
			if sy < 0 || sy >= h {
				fillBytes(row, fill)
				continue
			}
			// The image covers window columns lo..hi-1.
			lo := min(max(p.offX-p.winX, 0), p.winW)
			hi := min(max(p.offX+w-p.winX, lo), p.winW)
			fillBytes(row[:lo], fill)
			if hi > lo { // else the window lies beside the image, wholly
				sx := p.winX + lo - p.offX
				copy(row[lo:hi], plane[sy*w+sx:])
			}
			fillBytes(row[hi:], fill)
		}
	}
}

func fillBytes(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}

// pad places the fitted image into FIT_LARGE_SIZE_AND_PAD's frame with
// pad_mode: CONSTANT (pad_value, one or one per channel, default 0),
// MIRRORED (reflected without repeating the edge, OpenCV's BORDER_REFLECT_101)
// or REPEAT_NEAREST (the edge repeated).
func (a *Augmenter[T]) pad(out, pix []byte, c int, p *AugmentPlan) {
	mode := a.resize.GetPadMode()
	values := a.resize.GetPadValue()
	for ch := range c {
		var value byte
		if len(values) > 0 {
			value = saturateByte(values[min(ch, len(values)-1)])
		}
		in := pix[ch*p.fitH*p.fitW : (ch+1)*p.fitH*p.fitW]
		for y := range p.resH {
			sy, yIn := borderIndex(y-p.padTop, p.fitH, mode)
			for x := range p.resW {
				sx, xIn := borderIndex(x-p.padLeft, p.fitW, mode)
				v := value
				if (yIn && xIn) || mode != caffepb.ResizeParameter_CONSTANT {
					v = in[sy*p.fitW+sx]
				}
				out[(ch*p.resH+y)*p.resW+x] = v
			}
		}
	}
}

// borderIndex maps i to a pixel of 0..n-1 under the pad mode; inside
// says whether i was inside already.
func borderIndex(i, n int, mode caffepb.ResizeParameter_PadMode) (int, bool) {
	if i >= 0 && i < n {
		return i, true
	}
	switch mode {
	case caffepb.ResizeParameter_MIRRORED:
		if n == 1 {
			return 0, false
		}
		period := 2 * (n - 1)
		i %= period
		if i < 0 {
			i += period
		}
		if i >= n {
			i = period - i
		}
		return i, false
	default: // REPEAT_NEAREST; CONSTANT does not read the pixel
		return clampIndex(i, n), false
	}
}
