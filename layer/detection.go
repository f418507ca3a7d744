package layer

import (
	"math"
	"sort"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// The box arithmetic of SSD (weiliu89/caffe's bbox_util), shared by its
// layers. Boxes are normalized to the image (0 to 1) and held in float32,
// as SSD's NormalizedBBox, so that every comparison (the overlaps NMS
// tests, the scores it sorts) falls the same way as in SSD.

// normBox is a box's corners.
type normBox struct{ xmin, ymin, xmax, ymax float32 }

// size is the box's area, 0 for an inverted box.
func (b normBox) size() float32 {
	if b.xmax < b.xmin || b.ymax < b.ymin {
		return 0
	}
	return (b.xmax - b.xmin) * (b.ymax - b.ymin)
}

// jaccard is the intersection over union of two boxes.
func jaccard(a, b normBox) float32 {
	if b.xmin > a.xmax || b.xmax < a.xmin || b.ymin > a.ymax || b.ymax < a.ymin {
		return 0
	}
	w := min(a.xmax, b.xmax) - max(a.xmin, b.xmin)
	h := min(a.ymax, b.ymax) - max(a.ymin, b.ymin)
	if w <= 0 || h <= 0 {
		return 0
	}
	inter := w * h
	return inter / (a.size() + b.size() - inter)
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
		return normBox{prior.xmin + float32(v[0]*loc[0]), prior.ymin + float32(v[1]*loc[1]), prior.xmax + float32(v[2]*loc[2]), prior.ymax + float32(v[3]*loc[3])}
	case caffepb.PriorBoxParameter_CORNER_SIZE:
		w, h := prior.xmax-prior.xmin, prior.ymax-prior.ymin
		return normBox{prior.xmin + float32(v[0]*loc[0]*w), prior.ymin + float32(v[1]*loc[1]*h), prior.xmax + float32(v[2]*loc[2]*w), prior.ymax + float32(v[3]*loc[3]*h)}
	}
	// CENTER_SIZE.
	w, h := prior.xmax-prior.xmin, prior.ymax-prior.ymin
	cx, cy := float32(float64(prior.xmin+prior.xmax)/2), float32(float64(prior.ymin+prior.ymax)/2)
	// The conversions round each product, as SSD's float arithmetic does,
	// where Go could otherwise fuse a multiply and an add.
	dcx, dcy := float32(v[0]*loc[0]*w)+cx, float32(v[1]*loc[1]*h)+cy
	dw := float32(math.Exp(float64(v[2]*loc[2]))) * w
	dh := float32(math.Exp(float64(v[3]*loc[3]))) * h
	return normBox{
		float32(float64(dcx) - float64(dw)/2), float32(float64(dcy) - float64(dh)/2),
		float32(float64(dcx) + float64(dw)/2), float32(float64(dcy) + float64(dh)/2),
	}
}

// scoredIndex is a box's score and index.
type scoredIndex struct {
	score float32
	index int
}

// nms is SSD's ApplyNMSFast: the boxes scoring above threshold, best
// first (stable among equal scores), at most topK of them (topK < 0: all),
// each kept unless it overlaps a kept one by more than the NMS threshold,
// which eta < 1 lowers after each kept box while it is above 0.5.
func nms(boxes []normBox, scores []float32, threshold, nmsThreshold, eta float32, topK int) []int {
	var cand []scoredIndex
	for i, s := range scores {
		if s > threshold {
			cand = append(cand, scoredIndex{s, i})
		}
	}
	sort.SliceStable(cand, func(i, j int) bool { return cand[i].score > cand[j].score })
	if topK > -1 && topK < len(cand) {
		cand = cand[:topK]
	}
	var kept []int
	adaptive := nmsThreshold
	for _, c := range cand {
		keep := true
		for _, k := range kept {
			if jaccard(boxes[c.index], boxes[k]) > adaptive {
				keep = false
				break
			}
		}
		if keep {
			kept = append(kept, c.index)
			if eta < 1 && adaptive > 0.5 {
				adaptive *= eta
			}
		}
	}
	return kept
}
