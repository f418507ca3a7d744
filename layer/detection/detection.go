package detection

import (
	"math"
	"slices"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// The box arithmetic of SSD (weiliu89/caffe's bbox_util), shared by its
// layers. Boxes are normalized to the image (0 to 1) and held in float32,
// as SSD's NormalizedBBox, so that every comparison (the overlaps NMS
// tests, the scores it sorts) falls the same way as in SSD.

// normBox is a box's corners: data.BBox, the box arithmetic SSD's data
// augmentation shares.
type normBox = data.BBox

// box makes a box from its corners.
func box(xmin, ymin, xmax, ymax float32) normBox {
	return normBox{XMin: xmin, YMin: ymin, XMax: xmax, YMax: ymax}
}

// decodeBox turns a predicted offset loc (four values) relative to a
// prior box with its variances into a box, for SSD's three encodings.
// With the variance encoded in the target, the variances are not applied.
func decodeBox(prior normBox, variance []float32, code caffepb.PriorBoxParameter_CodeType, varianceInTarget bool, loc []float32) normBox {
	v := [4]float32{1, 1, 1, 1}
	if !varianceInTarget {
		copy(v[:], variance)
	}
	switch code {
	case caffepb.PriorBoxParameter_CORNER:
		return box(prior.XMin+float32(v[0]*loc[0]), prior.YMin+float32(v[1]*loc[1]), prior.XMax+float32(v[2]*loc[2]), prior.YMax+float32(v[3]*loc[3]))
	case caffepb.PriorBoxParameter_CORNER_SIZE:
		w, h := prior.XMax-prior.XMin, prior.YMax-prior.YMin
		return box(prior.XMin+float32(v[0]*loc[0]*w), prior.YMin+float32(v[1]*loc[1]*h), prior.XMax+float32(v[2]*loc[2]*w), prior.YMax+float32(v[3]*loc[3]*h))
	}
	// CENTER_SIZE.
	w, h := prior.XMax-prior.XMin, prior.YMax-prior.YMin
	cx, cy := float32(float64(prior.XMin+prior.XMax)/2), float32(float64(prior.YMin+prior.YMax)/2)
	// The conversions round each product, as SSD's float arithmetic does,
	// where Go could otherwise fuse a multiply and an add.
	dcx, dcy := float32(v[0]*loc[0]*w)+cx, float32(v[1]*loc[1]*h)+cy
	dw := float32(math.Exp(float64(v[2]*loc[2]))) * w
	dh := float32(math.Exp(float64(v[3]*loc[3]))) * h
	return box(
		float32(float64(dcx)-float64(dw)/2), float32(float64(dcy)-float64(dh)/2),
		float32(float64(dcx)+float64(dw)/2), float32(float64(dcy)+float64(dh)/2),
	)
}

// scoredIndex is a box's score and index.
type scoredIndex struct {
	score float32
	index int
}

// nmsScratch is nms's memory, kept between calls so that a pass
// allocates nothing once it has grown.
type nmsScratch struct {
	cand  []scoredIndex
	kept  []int
	boxes []keptBox // the kept boxes, in kept's order
}

// keptBox is a kept box's corners and area, side by side: the overlap
// test walks them in one stream, where boxes[k] jumped about the boxes
// and recomputed the area each time (the test was a quarter of
// MobileNet-SSD's CPU time at batch 1 on the fillers' weights).
type keptBox struct{ xmin, ymin, xmax, ymax, size float32 }

// overlapsAny reports whether data.Jaccard(b, k) > t for a box k of kb,
// computed as Jaccard computes it (the same operations in the same order,
// so the same float32 result). One call walks them all: a call per kept
// box, which the compiler did not inline, was a third of the test's time.
func overlapsAny(b normBox, size float32, kb []keptBox, t float32) bool {
	for i := range kb {
		k := &kb[i]
		var iou float32
		if !(k.xmin > b.XMax || k.xmax < b.XMin || k.ymin > b.YMax || k.ymax < b.YMin) {
			w := min(b.XMax, k.xmax) - max(b.XMin, k.xmin)
			h := min(b.YMax, k.ymax) - max(b.YMin, k.ymin)
			if !(w <= 0 || h <= 0) { // as Jaccard's test: a NaN width goes on to a NaN
				inter := w * h
				iou = inter / (size + k.size - inter)
			}
		}
		if iou > t {
			return true
		}
	}
	return false
}

// before reports whether a comes first in SSD's order of candidates:
// the higher score, and of equal scores the lower index (the order a
// stable sort leaves candidates listed by index in).
func before(a, b scoredIndex) bool {
	return a.score > b.score || a.score == b.score && a.index < b.index
}

// nms is SSD's ApplyNMSFast: the boxes scoring above threshold, best
// first (stable among equal scores), at most topK of them (topK < 0: all),
// each kept unless it overlaps a kept one by more than the NMS threshold,
// which eta < 1 lowers after each kept box while it is above 0.5. The
// result is valid until the next call.
//
// With topK below the candidates' number, the best topK are selected
// first (a heap of topK, the others never sorted), then sorted: SSD's
// deploy nets keep 100 or 400 of a class's thousands of candidates, and a
// stable sort of them all through sort.SliceStable's reflection took a
// third of MobileNet-SSD's batch-1 pass on the fillers' weights (every
// softmax score above the 0.01 threshold).
func (s *nmsScratch) nms(boxes []normBox, scores []float32, threshold, nmsThreshold, eta float32, topK int) []int {
	cand := s.cand[:0]
	for i, v := range scores {
		if v > threshold {
			cand = append(cand, scoredIndex{v, i})
		}
	}
	s.cand = cand
	if topK > -1 && topK < len(cand) {
		cand = selectBest(cand, topK)
	}
	slices.SortFunc(cand, func(a, b scoredIndex) int {
		if before(a, b) {
			return -1
		}
		if before(b, a) {
			return 1
		}
		return 0
	})
	kept, kb := s.kept[:0], s.boxes[:0]
	adaptive := nmsThreshold
	for _, c := range cand {
		b := boxes[c.index]
		size := b.Size()
		if !overlapsAny(b, size, kb, adaptive) {
			kept = append(kept, c.index)
			kb = append(kb, keptBox{b.XMin, b.YMin, b.XMax, b.YMax, size})
			if eta < 1 && adaptive > 0.5 {
				adaptive *= eta
			}
		}
	}
	s.kept, s.boxes = kept, kb
	return kept
}

// selectBest moves the k candidates that come first (before) to cand[:k],
// in no order, and returns cand[:k]: Hoare's selection, partitioning
// about a median of three until the candidate of rank k stands at k. A
// heap of the best k took a quarter of a class's suppression when
// every score passed the threshold (most later candidates replaced its
// root).
func selectBest(cand []scoredIndex, k int) []scoredIndex {
	lo, hi := 0, len(cand)-1
	for lo < hi {
		i := partitionAbout(cand[lo:hi+1]) + lo
		switch {
		case i == k:
			return cand[:k]
		case i < k:
			lo = i + 1
		default:
			hi = i - 1
		}
	}
	return cand[:k]
}

// partitionAbout moves the median of c's first, middle and last
// candidates to where it stands in before's order, those before it
// ahead of it and the others behind, and returns its index.
func partitionAbout(c []scoredIndex) int {
	last, mid := len(c)-1, len(c)/2
	if before(c[mid], c[0]) {
		c[mid], c[0] = c[0], c[mid]
	}
	if before(c[last], c[0]) {
		c[last], c[0] = c[0], c[last]
	}
	if before(c[mid], c[last]) {
		c[mid], c[last] = c[last], c[mid]
	}
	pivot, i := c[last], 0
	for j := range c[:last] {
		if before(c[j], pivot) {
			c[i], c[j] = c[j], c[i]
			i++
		}
	}
	c[i], c[last] = c[last], c[i]
	return i
}
