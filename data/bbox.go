package data

import "github.com/gocaffe/gocaffe/proto/caffepb"

// BBox is a box given by its corners, normalized to its image (0 to 1 along
// each axis) as SSD's NormalizedBBox, in float32 so that every comparison
// falls as it does in SSD (weiliu89/caffe's bbox_util). SSD's data
// augmentation (sampling, cropping, expanding, mirroring) moves boxes with
// the methods below; its layers (layer.MultiBoxLoss, DetectionOutput) share
// Jaccard.
type BBox struct {
	XMin, YMin, XMax, YMax float32
	Difficult              bool
}

// BBoxFromProto returns b's corners and difficult flag.
func BBoxFromProto(b *caffepb.NormalizedBBox) BBox {
	return BBox{XMin: b.GetXmin(), YMin: b.GetYmin(), XMax: b.GetXmax(), YMax: b.GetYmax(), Difficult: b.GetDifficult()}
}

// Size is the box's area, 0 for an inverted box.
func (b BBox) Size() float32 {
	if b.XMax < b.XMin || b.YMax < b.YMin {
		return 0
	}
	return (b.XMax - b.XMin) * (b.YMax - b.YMin)
}

// Intersect is the overlap of two boxes, the zero box when they are apart.
func (b BBox) Intersect(o BBox) BBox {
	if o.XMin > b.XMax || o.XMax < b.XMin || o.YMin > b.YMax || o.YMax < b.YMin {
		return BBox{}
	}
	return BBox{XMin: max(b.XMin, o.XMin), YMin: max(b.YMin, o.YMin), XMax: min(b.XMax, o.XMax), YMax: min(b.YMax, o.YMax)}
}

// Jaccard is the intersection over union of two boxes.
func Jaccard(a, b BBox) float32 {
	in := a.Intersect(b)
	w, h := in.XMax-in.XMin, in.YMax-in.YMin
	if w <= 0 || h <= 0 {
		return 0
	}
	inter := w * h
	return inter / (a.Size() + b.Size() - inter)
}

// Coverage is the part of b that o covers: area(b ∩ o) / area(b).
func (b BBox) Coverage(o BBox) float32 {
	inter := b.Intersect(o).Size()
	if inter <= 0 {
		return 0
	}
	return inter / b.Size()
}

// Clip clamps the corners into [0, 1].
func (b BBox) Clip() BBox {
	clamp := func(v float32) float32 { return max(min(v, 1), 0) }
	return BBox{XMin: clamp(b.XMin), YMin: clamp(b.YMin), XMax: clamp(b.XMax), YMax: clamp(b.YMax), Difficult: b.Difficult}
}

// Locate maps b, given relative to the window src, into src's frame
// (SSD's LocateBBox): a box sampled in the unit square becomes a box of the
// image src covers.
func (src BBox) Locate(b BBox) BBox {
	w, h := src.XMax-src.XMin, src.YMax-src.YMin
	return BBox{XMin: src.XMin + b.XMin*w, YMin: src.YMin + b.YMin*h, XMax: src.XMin + b.XMax*w, YMax: src.YMin + b.YMax*h, Difficult: b.Difficult}
}

// Project expresses b relative to the window src, clipped to it (SSD's
// ProjectBBox); ok is false when nothing of b is left inside src.
func (src BBox) Project(b BBox) (p BBox, ok bool) {
	if b.XMin >= src.XMax || b.XMax <= src.XMin || b.YMin >= src.YMax || b.YMax <= src.YMin {
		return BBox{}, false
	}
	w, h := src.XMax-src.XMin, src.YMax-src.YMin
	p = BBox{XMin: (b.XMin - src.XMin) / w, YMin: (b.YMin - src.YMin) / h, XMax: (b.XMax - src.XMin) / w, YMax: (b.YMax - src.YMin) / h, Difficult: b.Difficult}.Clip()
	return p, p.Size() > 0
}

// meetsEmitConstraint reports whether an object box b is kept in the
// window src (SSD's MeetEmitConstraint): CENTER keeps it when its centre
// lies inside src, MIN_OVERLAP when src covers more than emit_overlap of
// it.
func meetsEmitConstraint(src, b BBox, c *caffepb.EmitConstraint) bool {
	if c.GetEmitType() == caffepb.EmitConstraint_MIN_OVERLAP {
		return b.Coverage(src) > c.GetEmitOverlap()
	}
	x, y := (b.XMin+b.XMax)/2, (b.YMin+b.YMax)/2
	return x >= src.XMin && x <= src.XMax && y >= src.YMin && y <= src.YMax
}
