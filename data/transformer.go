package data

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// Transformer applies a TransformationParameter to datums, as Caffe's
// DataTransformer: for each datum, in this order, decode (encoded datums,
// honouring force_color and force_gray), crop to crop_size x crop_size (a
// random offset in TRAIN, the centre in TEST), mirror horizontally (at
// random, in either phase, when mirror is set), subtract the mean (the
// mean_file blob at the cropped position, or one mean_value per channel, a
// single one standing for every channel) and multiply by scale.
//
// TSN's Caffe (yjxiong/caffe) adds, in TRAIN with a crop size:
// multi_scale (the crop's height and width drawn from scale_ratios of the
// image's short side, default 1, .875, .75, .66, pairs at most max_distort
// ratios apart, then resized to crop_size), fix_crop (the crop's corner
// drawn from the four corners and the centre, and with more_fix_crop eight
// more places), and is_flow (mirroring inverts the horizontal flow
// channels, the even ones: 255 - v). Its mean_value may give one value
// per group of channels (a stack of frames), repeated across the stack.
//
// Its random draws come from its own generator, seeded at construction or
// by Reseed, so a run is reproducible. A Transformer is not safe for
// concurrent use: a Data layer's prefetch goroutine owns its transformer.
type Transformer[T blob.Float] struct {
	phase      caffepb.Phase
	crop       int
	scale      T
	mirror     bool
	mode       ColorMode
	forced     bool // force_color or force_gray: only meaningful for encoded datums
	warnedRaw  bool
	meanFile   string
	mean       []T    // mean_file values, nil without one
	meanShape  [3]int // its channels, height, width
	meanValues []T

	// TSN's options.
	fixCrop, moreFixCrop, multiScale, isFlow bool
	scaleRatios                              []float32
	maxDistort                               int

	src *rand.PCG
	rng *rand.Rand

	log *slog.Logger // nil: slog.Default()

	dec     ImageReader // decodes encoded datums, reusing its buffers
	decoded DatumRecord // the last decoded datum
}

// NewTransformer builds a transformer for phase from p (nil means the
// defaults: no transformation). It reads the mean file, if any. seed seeds
// the random crops and mirrors.
func NewTransformer[T blob.Float](p *caffepb.TransformationParameter, phase caffepb.Phase, seed uint64) (*Transformer[T], error) {
	t := &Transformer[T]{
		phase: phase, crop: int(p.GetCropSize()), scale: T(p.GetScale()), mirror: p.GetMirror(),
		src: &rand.PCG{},
	}
	t.rng = rand.New(t.src)
	t.Reseed(seed)
	t.fixCrop, t.moreFixCrop, t.multiScale, t.isFlow = p.GetFixCrop(), p.GetMoreFixCrop(), p.GetMultiScale(), p.GetIsFlow()
	t.scaleRatios, t.maxDistort = p.GetScaleRatios(), int(p.GetMaxDistort())
	if len(t.scaleRatios) == 0 {
		t.scaleRatios = []float32{1, .875, .75, .66}
	}
	if p.GetOriginalImage() {
		return nil, errors.New("transform_param: TSN's original_image is not implemented")
	}
	if err := t.setColor(p); err != nil {
		return nil, err
	}
	if p.GetMeanFile() != "" && len(p.GetMeanValue()) > 0 {
		return nil, errors.New("transform_param: cannot specify mean_file and mean_value at the same time")
	}
	for _, v := range p.GetMeanValue() {
		t.meanValues = append(t.meanValues, T(v))
	}
	if p.GetMeanFile() != "" {
		if err := t.readMean(p.GetMeanFile()); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// SetLogger sets the logger of the transformer's warnings; nil, the
// default, is slog.Default(). A layer gives its transformer its own.
func (t *Transformer[T]) SetLogger(l *slog.Logger) { t.log = l }

// SetMaxImagePixels caps the size of the encoded images the transformer
// decodes (0 or less: DefaultMaxImagePixels). A layer sets its context's
// MaxImagePixels setting.
func (t *Transformer[T]) SetMaxImagePixels(n int64) { t.dec.MaxPixels = n }

// MaxImagePixels returns the cap SetMaxImagePixels set, for the decoders
// that work beside the transformer.
func (t *Transformer[T]) MaxImagePixels() int64 { return t.dec.MaxPixels }

// Reseed restarts the random crops and mirrors from seed.
func (t *Transformer[T]) Reseed(seed uint64) { mathfn.SeedPCG(t.src, seed) }

func (t *Transformer[T]) setColor(p *caffepb.TransformationParameter) error {
	switch {
	case p.GetForceColor() && p.GetForceGray():
		return errors.New("transform_param: cannot set both force_color and force_gray")
	case p.GetForceColor():
		t.mode = Color
	case p.GetForceGray():
		t.mode = Gray
	}
	t.forced = t.mode != Native
	t.dec.Mode = t.mode
	return nil
}

// readMean loads the mean blob, a BlobProto of one datum's shape (Caffe's
// compute_image_mean writes 1 x C x H x W).
func (t *Transformer[T]) readMean(path string) error {
	bp := &caffepb.BlobProto{}
	if err := protoio.ReadProtoFromBinaryFile(path, bp); err != nil {
		return fmt.Errorf("transform_param.mean_file %s: %w", path, err)
	}
	b, err := blob.New[T]()
	if err != nil {
		return err
	}
	if err := b.FromProto(bp, true); err != nil {
		return fmt.Errorf("transform_param.mean_file %s: %w", path, err)
	}
	if b.NumAxes() > 4 || b.Count() == 0 {
		return fmt.Errorf("transform_param.mean_file %s: mean blob of shape %s is not a C x H x W image", path, b.ShapeString())
	}
	t.meanFile = path
	t.meanShape = [3]int{b.Channels(), b.Height(), b.Width()}
	t.mean = append([]T(nil), b.CPUData()...)
	return nil
}

// InferBlobShape returns the shape of one transformed datum as Caffe does,
// 1 x C x H x W (H and W are crop_size when cropping), checking the datum
// against the crop size and the mean. An encoded datum is decoded.
func (t *Transformer[T]) InferBlobShape(d *caffepb.Datum) ([]int, error) {
	var r DatumRecord
	r.SetDatum(d)
	return t.InferRecordShape(&r)
}

// InferRecordShape is InferBlobShape for a DatumRecord.
func (t *Transformer[T]) InferRecordShape(r *DatumRecord) ([]int, error) {
	raw, err := t.decode(r)
	if err != nil {
		return nil, err
	}
	c, h, w, err := t.ItemShape(raw)
	if err != nil {
		return nil, err
	}
	return []int{1, c, h, w}, nil
}

// ItemShape returns the (channels, height, width) that a raw (decoded)
// record transforms to, after checking it against the crop size and the
// mean.
func (t *Transformer[T]) ItemShape(r *DatumRecord) (c, h, w int, err error) {
	if c, h, w, err = r.Shape(); err != nil {
		return 0, 0, 0, err
	}
	return t.ImageItemShape(c, h, w)
}

// ImageItemShape is ItemShape for an 8-bit image of c x h x w, decoded or
// not.
func (t *Transformer[T]) ImageItemShape(c, h, w int) (int, int, int, error) {
	if t.crop > 0 && (h < t.crop || w < t.crop) {
		return 0, 0, 0, fmt.Errorf("crop_size %d is larger than the datum (%dx%dx%d)", t.crop, c, h, w)
	}
	if t.mean != nil && t.meanShape != [3]int{c, h, w} {
		return 0, 0, 0, fmt.Errorf("the mean in mean_file %s has shape %dx%dx%d, the datum %dx%dx%d: they must be equal",
			t.meanFile, t.meanShape[0], t.meanShape[1], t.meanShape[2], c, h, w)
	}
	if n := len(t.meanValues); n > 1 && c%n != 0 {
		return 0, 0, 0, fmt.Errorf("specify either 1 mean_value or as many as channels: %d (or, as TSN allows, as many as a group of channels that repeats; got %d)", c, n)
	}
	if t.crop > 0 {
		h, w = t.crop, t.crop
	}
	return c, h, w, nil
}

// Transform transforms one datum into dst, which must hold exactly one
// item (C x H x W of InferBlobShape): typically a slice of a batch blob.
func (t *Transformer[T]) Transform(d *caffepb.Datum, dst []T) error {
	var r DatumRecord
	r.SetDatum(d)
	return t.TransformRecord(&r, dst)
}

// TransformRecord is Transform for a DatumRecord. For a raw record it
// allocates nothing.
func (t *Transformer[T]) TransformRecord(r *DatumRecord, dst []T) error {
	raw, err := t.decode(r)
	if err != nil {
		return err
	}
	return t.TransformImage(raw, dst)
}

// ColorMode is how encoded datums are decoded: Color for force_color, Gray
// for force_gray, Native otherwise. Callers that decode encoded datums
// themselves (on several goroutines, say) decode in this mode and pass the
// result to TransformImage.
func (t *Transformer[T]) ColorMode() ColorMode { return t.mode }

// TransformImage transforms a decoded image (a raw record, from
// ImageReader or a decoded datum) into dst. force_color and force_gray do
// not apply: the image was decoded already.
func (t *Transformer[T]) TransformImage(raw *DatumRecord, dst []T) error {
	p, err := t.PlanImage(raw, len(dst))
	if err != nil {
		return err
	}
	t.ApplyPlan(raw, p, dst)
	return nil
}

// PlanRaw is PlanImage for a raw record, which TransformRecord would
// transform (it says once that force_color and force_gray do not apply).
func (t *Transformer[T]) PlanRaw(r *DatumRecord, size int) (TransformPlan, error) {
	if r.Encoded {
		return TransformPlan{}, errors.New("PlanRaw takes a raw record; this one is encoded")
	}
	raw, err := t.decode(r)
	if err != nil {
		return TransformPlan{}, err
	}
	return t.PlanImage(raw, size)
}

// TransformPlan is one image's random choices (mirror, crop offsets).
type TransformPlan struct{ g planeGeometry }

// PlanImage checks that the decoded image raw transforms into an item of
// size values and draws its random choices in Caffe's order. Plans must be
// drawn item by item in the batch's order, so that a seed gives the same
// batches; ApplyPlan, which does the work, may then run for several items
// at once on other goroutines.
func (t *Transformer[T]) PlanImage(raw *DatumRecord, size int) (TransformPlan, error) {
	if _, _, _, err := raw.Shape(); err != nil {
		return TransformPlan{}, err
	}
	return t.plan(raw.Channels, raw.Height, raw.Width, size, len(raw.Data) > 0)
}

// PlanPixels is PlanImage for an 8-bit image of c x h x w that is not
// decoded yet: a JPEG whose header gave its size, decoded later on the
// device. It draws the same random choices as PlanImage would for the
// decoded image.
func (t *Transformer[T]) PlanPixels(c, h, w, size int) (TransformPlan, error) {
	if _, _, _, err := checkShape(c, h, w, c*h*w, 0); err != nil {
		return TransformPlan{}, err
	}
	return t.plan(c, h, w, size, true)
}

// plan is PlanImage for an image of c x h x w, of bytes or of floats.
func (t *Transformer[T]) plan(c, h, w, size int, bytes bool) (TransformPlan, error) {
	oc, oh, ow, err := t.ImageItemShape(c, h, w)
	if err != nil {
		return TransformPlan{}, err
	}
	if size != oc*oh*ow {
		return TransformPlan{}, fmt.Errorf("datum of shape %dx%dx%d transforms to %dx%dx%d (%d values), but the output item holds %d",
			c, h, w, oc, oh, ow, oc*oh*ow, size)
	}
	g := t.geometry(c, h, w)
	if (g.winH != g.oh || g.winW != g.ow) && !bytes {
		return TransformPlan{}, errors.New("TSN's multi_scale resizes 8-bit images; this datum holds float_data")
	}
	return TransformPlan{g}, nil
}

// ApplyPlan writes the transformed image into dst as planned. It reads the
// transformer's mean and scale only, so calls for different items may run
// concurrently.
func (t *Transformer[T]) ApplyPlan(raw *DatumRecord, p TransformPlan, dst []T) {
	switch {
	case p.g.winH != p.g.oh || p.g.winW != p.g.ow:
		t.applyScaled(raw, p.g, dst)
	case len(raw.Data) > 0:
		transformPixels(raw.Data, dst, p.g, t.mean, t.meanValues, t.scale)
	default:
		transformPlanes(raw.FloatData, dst, p.g, t.mean, t.meanValues, t.scale)
	}
}

// resizers serves applyScaled's resizing, which may run on several
// goroutines at once.
var resizers = sync.Pool{New: func() any { return &scaledScratch{} }}

type scaledScratch struct {
	rs          Resizer
	window, out []byte
}

// applyScaled is TSN's multi-scale crop: each channel's window is resized
// to the crop size, then mirrored, and the mean (the mean file's top-left
// corner, as TSN indexes it) and scale applied.
func (t *Transformer[T]) applyScaled(raw *DatumRecord, g planeGeometry, dst []T) {
	s := resizers.Get().(*scaledScratch)
	defer resizers.Put(s)
	s.window = grown(s.window, g.winH*g.winW)
	plane := planeGeometry{c: 1, h: g.oh, w: g.ow, oh: g.oh, ow: g.ow, winH: g.oh, winW: g.ow, mirror: g.mirror, flow: g.flow}
	var mean []T
	if t.mean != nil {
		mean = make([]T, g.oh*g.ow)
	}
	for c := range g.c {
		for y := range g.winH {
			si := (c*g.h+g.hOff+y)*g.w + g.wOff
			copy(s.window[y*g.winW:(y+1)*g.winW], raw.Data[si:si+g.winW])
		}
		s.out, _ = s.rs.Resize(s.out, s.window, 1, g.winH, g.winW, g.oh, g.ow)
		if mean != nil { // TSN reads the mean at (c, y, x) of the full-size mean
			for y := range g.oh {
				copy(mean[y*g.ow:(y+1)*g.ow], t.mean[(c*g.h+y)*g.w:])
			}
		}
		plane.channel = c
		transformPixels(s.out, dst[c*g.oh*g.ow:(c+1)*g.oh*g.ow], plane, mean, t.meanValues, t.scale)
	}
}

// decode returns r itself when raw, or its decoded image.
func (t *Transformer[T]) decode(r *DatumRecord) (*DatumRecord, error) {
	if !r.Encoded {
		if t.forced && !t.warnedRaw {
			t.warnedRaw = true
			logf.Errorf(t.log, "force_color and force_gray only for encoded datum")
		}
		return r, nil
	}
	dec, err := t.dec.Decode(r.Data)
	if err != nil {
		return nil, fmt.Errorf("decoding an encoded datum (%d bytes): %w", len(r.Data), err)
	}
	dec.Label = r.Label
	t.decoded = dec
	return &t.decoded, nil
}

// geometry draws this datum's random choices in Caffe's order: the mirror
// coin first, then (TSN) the multi-scale crop size and the fixed crop
// place, or the crop offsets (rows, then columns).
func (t *Transformer[T]) geometry(c, h, w int) planeGeometry {
	g := planeGeometry{c: c, h: h, w: w, oh: h, ow: w, winH: h, winW: w, flow: t.isFlow}
	g.mirror = t.mirror && t.rng.IntN(2) == 1
	if t.crop > 0 {
		g.oh, g.ow, g.winH, g.winW = t.crop, t.crop, t.crop, t.crop
		if t.phase != caffepb.Phase_TRAIN {
			g.hOff, g.wOff = (h-t.crop)/2, (w-t.crop)/2
			return g
		}
		if t.multiScale {
			sizes := tsnCropSizes(h, w, t.crop, t.maxDistort, t.scaleRatios)
			sz := sizes[t.rng.IntN(len(sizes))]
			g.winH, g.winW = sz[0], sz[1]
		}
		if t.fixCrop {
			offs := tsnFixedOffsets(h, w, g.winH, g.winW, t.moreFixCrop)
			off := offs[t.rng.IntN(len(offs))]
			g.hOff, g.wOff = off[0], off[1]
		} else {
			g.hOff = t.rng.IntN(h - g.winH + 1)
			g.wOff = t.rng.IntN(w - g.winW + 1)
		}
	}
	return g
}

// tsnCropSizes are TSN's multi-scale crop sizes (its fillCropSize): each
// pair of scale ratios of the short side at most maxDistort apart in the
// list, a side within 2 pixels of the crop size taken as the crop size.
func tsnCropSizes(h, w, crop, maxDistort int, ratios []float32) [][2]int {
	base := float32(min(h, w))
	side := func(r float32) int {
		s := int(base * r)
		if s-crop < 3 && crop-s < 3 {
			return crop
		}
		return s
	}
	var out [][2]int
	for i, rh := range ratios {
		for j, rw := range ratios {
			if i-j <= maxDistort && j-i <= maxDistort {
				out = append(out, [2]int{side(rh), side(rw)})
			}
		}
	}
	return out
}

// tsnFixedOffsets are TSN's fixed crop places (its fillFixOffset): the
// four corners and the centre, and with more the middles of the edges and
// the centres of the quarters, on a grid of a quarter of the slack.
func tsnFixedOffsets(h, w, ch, cw int, more bool) [][2]int {
	hq, wq := (h-ch)/4, (w-cw)/4
	out := [][2]int{{0, 0}, {0, 4 * wq}, {4 * hq, 0}, {4 * hq, 4 * wq}, {2 * hq, 2 * wq}}
	if more {
		out = append(out, [2]int{0, 2 * wq}, [2]int{4 * hq, 2 * wq}, [2]int{2 * hq, 0}, [2]int{2 * hq, 4 * wq},
			[2]int{hq, wq}, [2]int{hq, 3 * wq}, [2]int{3 * hq, wq}, [2]int{3 * hq, 3 * wq})
	}
	return out
}

// planeGeometry is one datum's crop window and mirror choice.
type planeGeometry struct {
	c, h, w    int // source
	oh, ow     int // output
	hOff, wOff int
	winH, winW int // the source window: the output's size unless resized (TSN's multi_scale)
	mirror     bool
	flow       bool // TSN's is_flow: mirroring inverts the even channels
	channel    int  // the first channel's number, for flow and mean values
}

// transformPlanes writes dst[c][y][x] = (src[c][y+hOff][x'+wOff] - mean) *
// scale, with x' = x or, mirrored, ow-1-x. The mean is the mean blob at
// the source position, else the channel's mean value (the values repeat
// when there are fewer than channels), else 0 (subtracting 0 leaves the
// value exactly as it was, so one loop serves both). A mirrored flow
// image's even channels are inverted first (255 - v).
func transformPlanes[S byte | float32, T blob.Float](src []S, dst []T, g planeGeometry, mean, meanValues []T, scale T) {
	for c := range g.c {
		var mv T
		if len(meanValues) > 0 {
			mv = meanValues[(g.channel+c)%len(meanValues)]
		}
		invert := g.flow && g.mirror && (g.channel+c)%2 == 0
		for y := range g.oh {
			si := (c*g.h+g.hOff+y)*g.w + g.wOff
			in := src[si : si+g.ow]
			out := dst[(c*g.oh+y)*g.ow : (c*g.oh+y+1)*g.ow]
			switch {
			case invert:
				rowInverted(in, mean, si, mv, out, scale)
			case mean != nil:
				rowMinusMean(in, mean[si:si+g.ow], out, scale, g.mirror)
			default:
				rowMinusValue(in, mv, out, scale, g.mirror)
			}
		}
	}
}

// transformPixels is transformPlanes for 8-bit pixels. Without a mean
// blob, each channel's 256 possible results are computed once, by the same
// expression, and looked up: the bytes of an image map to exactly the
// values transformPlanes would give, several times faster.
func transformPixels[T blob.Float](src []byte, dst []T, g planeGeometry, mean, meanValues []T, scale T) {
	if mean != nil {
		transformPlanes(src, dst, g, mean, meanValues, scale)
		return
	}
	var lut [256]T
	for c := range g.c {
		var mv T
		if len(meanValues) > 0 {
			mv = meanValues[(g.channel+c)%len(meanValues)]
		}
		invert := g.flow && g.mirror && (g.channel+c)%2 == 0
		for v := range lut {
			if invert {
				lut[v] = (255 - T(v) - mv) * scale
			} else {
				lut[v] = (T(v) - mv) * scale
			}
		}
		for y := range g.oh {
			si := (c*g.h+g.hOff+y)*g.w + g.wOff
			in := src[si : si+g.ow]
			out := dst[(c*g.oh+y)*g.ow : (c*g.oh+y+1)*g.ow]
			if g.mirror {
				last := len(in) - 1
				for x, v := range in {
					out[last-x] = lut[v]
				}
			} else {
				out = out[:len(in)]
				for x, v := range in {
					out[x] = lut[v]
				}
			}
		}
	}
}

// rowInverted is a mirrored row of a horizontal flow channel: 255 - v,
// less the mean (the blob's at si, or mv), times scale.
func rowInverted[S byte | float32, T blob.Float](in []S, mean []T, si int, mv T, out []T, scale T) {
	last := len(in) - 1
	for x, v := range in {
		m := mv
		if mean != nil {
			m = mean[si+x]
		}
		out[last-x] = (255 - T(v) - m) * scale
	}
}

func rowMinusMean[S byte | float32, T blob.Float](in []S, mean, out []T, scale T, mirror bool) {
	mean = mean[:len(in)]
	out = out[:len(in)]
	if mirror {
		last := len(out) - 1
		for x, v := range in {
			out[last-x] = (T(v) - mean[x]) * scale
		}
		return
	}
	for x, v := range in {
		out[x] = (T(v) - mean[x]) * scale
	}
}

func rowMinusValue[S byte | float32, T blob.Float](in []S, mv T, out []T, scale T, mirror bool) {
	out = out[:len(in)]
	if mirror {
		last := len(out) - 1
		for x, v := range in {
			out[last-x] = (T(v) - mv) * scale
		}
		return
	}
	for x, v := range in {
		out[x] = (T(v) - mv) * scale
	}
}
