package detection

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	if err := layer.RegisterPython("rpn.proposal_layer.ProposalLayer", newProposal[float32], newProposal[float64]); err != nil {
		panic(err)
	}
}

// Proposal is Faster R-CNN's region proposal layer, the Python layer
// rpn.proposal_layer.ProposalLayer of py-faster-rcnn, written in Go and
// registered under that name, so that Faster R-CNN's test nets run
// unchanged:
//
//	layer { name: "proposal" type: "Python" bottom: "rpn_cls_prob_reshape" bottom: "rpn_bbox_pred" bottom: "im_info"
//	  top: "rois" python_param { module: "rpn.proposal_layer" layer: "ProposalLayer" param_str: "'feat_stride': 16" } }
//
// Bottoms: the objectness probabilities (1 x 2A x H x W, the second A
// channels foreground), the box deltas (1 x 4A x H x W) and im_info (image
// height, width and scale). The A anchors (py-faster-rcnn's
// generate_anchors: ratios 0.5, 1, 2 and param_str's scales, default 8 16
// 32, on a 16-pixel base) are placed every feat_stride pixels, moved by the
// deltas, clipped to the image; boxes narrower or lower than 16 pixels at
// the image's scale are dropped, the best pre_nms_top_n kept (6000 in TEST,
// 12000 in TRAIN), reduced by NMS at 0.7 IoU (pixel areas, +1) and cut to
// post_nms_top_n (300, 2000). Top 0: R x 5 regions (0, x1, y1, x2, y2);
// top 1, optional: their scores. Arithmetic is in float32, as py-faster-rcnn
// runs it on Caffe's blobs.
type proposalLayer[T layer.Float] struct {
	layer.Base[T]
	featStride      float64
	anchors         [][4]float32
	preNMS, postNMS int
	nmsThresh       float32
	minSize         float32
}

func newProposal[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &proposalLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	var err error
	if l.featStride, l.anchors, err = rpnAnchors(p, parsePyDict(p.GetPythonParam().GetParamStr())); err != nil {
		return nil, err
	}
	// py-faster-rcnn's cfg.TRAIN and cfg.TEST defaults.
	l.preNMS, l.postNMS, l.nmsThresh, l.minSize = 6000, 300, 0.7, 16
	if l.Phase() == caffepb.Phase_TRAIN {
		l.preNMS, l.postNMS = 12000, 2000
	}
	return l, nil
}

// pyKey finds the keys of a param_str's mapping ('feat_stride': or, as
// YAML also reads it, feat_stride:), pyValue reads the value after one: an
// optional YAML tag (py-faster-rcnn's COCO nets write 'scales': !!python/tuple
// [4, 8, 16, 32]), then a bracketed sequence or a scalar up to the next
// comma, brace or line end.
var (
	pyKey   = regexp.MustCompile(`(?:^|[\s,{])['"]?(\w+)['"]?\s*:\s*`)
	pyValue = regexp.MustCompile(`^(?:!![\w/:.]+\s*)?(\[[^\]]*\]|\([^)]*\)|[^,\n}]*)`)
)

// pyDict is a param_str written as a Python or YAML mapping, as
// py-faster-rcnn's layers read it with yaml.load: its numeric entries
// ('feat_stride': 16, 'scales': [8, 16, 32], True and False as 1 and 0),
// and the keys whose values are not numbers, which a layer must not
// mistake for absent ones (a value it could not read once fell back to the
// default anchors silently).
type pyDict struct {
	nums   map[string][]float64
	others map[string]string // key -> the value as written
}

// parsePyDict reads a param_str's mapping.
func parsePyDict(s string) pyDict {
	d := pyDict{nums: map[string][]float64{}, others: map[string]string{}}
	for _, k := range pyKey.FindAllStringSubmatchIndex(s, -1) {
		key := s[k[2]:k[3]]
		raw := strings.TrimSpace(pyValue.FindStringSubmatch(s[k[1]:])[1])
		vals, ok := pyNumbers(raw)
		if !ok {
			d.others[key] = raw
			continue
		}
		d.nums[key] = vals
	}
	return d
}

// pyNumbers reads a scalar or a bracketed sequence of numbers.
func pyNumbers(raw string) ([]float64, bool) {
	seq := strings.HasPrefix(raw, "[") || strings.HasPrefix(raw, "(")
	var vals []float64
	for _, f := range strings.FieldsFunc(strings.Trim(raw, "[]()"), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		switch f {
		case "True", "true":
			vals = append(vals, 1)
			continue
		case "False", "false":
			vals = append(vals, 0)
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, false
		}
		vals = append(vals, v)
	}
	return vals, seq || len(vals) == 1
}

// numbers returns key's numbers, whether the key is there, and an error
// for a key whose value is not numbers.
func (d pyDict) numbers(key string) ([]float64, bool, error) {
	if raw, ok := d.others[key]; ok {
		return nil, false, fmt.Errorf("param_str: %s is %q, which is not a number or a list of numbers", key, raw)
	}
	v, ok := d.nums[key]
	return v, ok, nil
}

// generateAnchors is py-faster-rcnn's generate_anchors: the base window
// (0, 0, base-1, base-1) reshaped to each ratio (sides rounded half to
// even, as numpy) and then scaled.
func generateAnchors(base float64, ratios, scales []float64) [][4]float32 {
	whctr := func(a [4]float64) (w, h, x, y float64) {
		w, h = a[2]-a[0]+1, a[3]-a[1]+1
		return w, h, a[0] + 0.5*(w-1), a[1] + 0.5*(h-1)
	}
	mk := func(w, h, x, y float64) [4]float64 {
		return [4]float64{x - 0.5*(w-1), y - 0.5*(h-1), x + 0.5*(w-1), y + 0.5*(h-1)}
	}
	w, h, x, y := whctr([4]float64{0, 0, base - 1, base - 1})
	var out [][4]float32
	for _, r := range ratios {
		ws := math.RoundToEven(math.Sqrt(w * h / r))
		hs := math.RoundToEven(ws * r)
		rw, rh, rx, ry := whctr(mk(ws, hs, x, y))
		for _, s := range scales {
			a := mk(rw*s, rh*s, rx, ry)
			out = append(out, [4]float32{float32(a[0]), float32(a[1]), float32(a[2]), float32(a[3])})
		}
	}
	return out
}

// Type returns "Python", the type its prototxt gives.
func (*proposalLayer[T]) Type() string { return "Python" }

// Counts: probabilities, deltas, im_info; the regions and their scores.
func (*proposalLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(3), Top: layer.Between(1, 2)}
}

// LayerSetUp checks the anchors against the bottoms.
func (l *proposalLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape checks the bottoms; the tops are sized by the forward pass.
func (l *proposalLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	a := len(l.anchors)
	prob, deltas := bottom[0], bottom[1]
	if prob.NumAxes() != 4 || prob.Shape()[0] != 1 {
		return fmt.Errorf("only single item batches are supported: probabilities %s", prob.ShapeString())
	}
	if prob.Shape()[1] != 2*a || deltas.NumAxes() != 4 || deltas.Shape()[1] != 4*a ||
		deltas.Shape()[2] != prob.Shape()[2] || deltas.Shape()[3] != prob.Shape()[3] {
		return fmt.Errorf("probabilities %s and deltas %s must be 1 x %d x H x W and 1 x %d x H x W for %d anchors",
			prob.ShapeString(), deltas.ShapeString(), 2*a, 4*a, a)
	}
	if bottom[2].Count() < 3 {
		return fmt.Errorf("im_info %s must hold height, width and scale", bottom[2].ShapeString())
	}
	if err := top[0].Reshape([]int{1, 5}); err != nil {
		return err
	}
	if len(top) > 1 {
		return top[1].Reshape([]int{1, 1, 1, 1})
	}
	return nil
}

// ForwardCPU computes the proposals.
func (l *proposalLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	a := len(l.anchors)
	hgt, wid := bottom[0].Shape()[2], bottom[0].Shape()[3]
	prob, deltas, info := toF32(bottom[0].CPUData()), toF32(bottom[1].CPUData()), toF32(bottom[2].CPUData())
	imH, imW, scale := info[0], info[1], info[2]
	plane := hgt * wid
	type proposal struct {
		box   [4]float32
		score float32
		index int
	}
	var props []proposal
	minSize := float64(l.minSize) * float64(scale)
	for y := range hgt {
		for x := range wid {
			for k, anc := range l.anchors {
				sx, sy := float64(x)*l.featStride, float64(y)*l.featStride
				d := func(j int) float32 { return deltas[(4*k+j)*plane+y*wid+x] }
				box := transformInv(shiftAnchor(anc, sx, sy), d(0), d(1), d(2), d(3))
				for j := range box {
					limit := imW - 1
					if j%2 == 1 {
						limit = imH - 1
					}
					box[j] = max(min(box[j], limit), 0)
				}
				if float64(box[2]-box[0]+1) < minSize || float64(box[3]-box[1]+1) < minSize {
					continue
				}
				props = append(props, proposal{box, prob[(a+k)*plane+y*wid+x], (y*wid+x)*a + k})
			}
		}
	}
	// Best first; among equal scores the later one first, as numpy's
	// argsort()[::-1].
	sort.SliceStable(props, func(i, j int) bool {
		if props[i].score != props[j].score {
			return props[i].score > props[j].score
		}
		return props[i].index > props[j].index
	})
	if l.preNMS > 0 && len(props) > l.preNMS {
		props = props[:l.preNMS]
	}
	var kept []proposal
	for _, p := range props {
		keep := true
		for _, q := range kept {
			if pixelIoU(p.box, q.box) > l.nmsThresh {
				keep = false
				break
			}
		}
		if keep {
			kept = append(kept, p)
			if l.postNMS > 0 && len(kept) == l.postNMS {
				break
			}
		}
	}
	if err := top[0].Reshape([]int{len(kept), 5}); err != nil {
		return err
	}
	rois := top[0].MutableCPUData()
	for i, p := range kept {
		copy(rois[5*i:], []T{0, T(p.box[0]), T(p.box[1]), T(p.box[2]), T(p.box[3])})
	}
	if len(top) > 1 {
		if err := top[1].Reshape([]int{len(kept), 1}); err != nil {
			return err
		}
		scores := top[1].MutableCPUData()
		for i, p := range kept {
			scores[i] = T(p.score)
		}
	}
	return nil
}

// transformInv is py-faster-rcnn's bbox_transform_inv for one box, in
// float32: the centre moves by (dx, dy) widths and heights, the sides
// scale by exp(dw), exp(dh).
func transformInv(b [4]float32, dx, dy, dw, dh float32) [4]float32 {
	w, h := b[2]-b[0]+1, b[3]-b[1]+1
	cx, cy := b[0]+0.5*w, b[1]+0.5*h
	px, py := float32(dx*w)+cx, float32(dy*h)+cy
	pw, ph := float32(math.Exp(float64(dw)))*w, float32(math.Exp(float64(dh)))*h
	return [4]float32{px - 0.5*pw, py - 0.5*ph, px + 0.5*pw, py + 0.5*ph}
}

// bboxTransform is py-faster-rcnn's bbox_transform, in float32: the
// deltas (dx, dy, dw, dh) that transformInv applies to ex to give gt.
func bboxTransform(ex, gt [4]float32) [4]float32 {
	ew, eh := ex[2]-ex[0]+1, ex[3]-ex[1]+1
	gw, gh := gt[2]-gt[0]+1, gt[3]-gt[1]+1
	dx := (gt[0] + 0.5*gw - (ex[0] + 0.5*ew)) / ew
	dy := (gt[1] + 0.5*gh - (ex[1] + 0.5*eh)) / eh
	return [4]float32{dx, dy, float32(math.Log(float64(gw / ew))), float32(math.Log(float64(gh / eh)))}
}

// pixelIoU is the overlap of two boxes in pixels (sides + 1), as
// py-faster-rcnn's NMS measures it.
func pixelIoU(a, b [4]float32) float32 {
	w := max(0, min(a[2], b[2])-max(a[0], b[0])+1)
	h := max(0, min(a[3], b[3])-max(a[1], b[1])+1)
	inter := w * h
	areaA := (a[2] - a[0] + 1) * (a[3] - a[1] + 1)
	areaB := (b[2] - b[0] + 1) * (b[3] - b[1] + 1)
	return inter / (areaA + areaB - inter)
}

// BackwardCPU does nothing: proposals get no gradient, as in
// py-faster-rcnn.
func (*proposalLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}

// ProposalAnchors returns the anchors the proposal layer uses by default
// (py-faster-rcnn's generate_anchors()), for tests and tools.
func ProposalAnchors() [][4]float32 {
	return generateAnchors(16, []float64{0.5, 1, 2}, []float64{8, 16, 32})
}
