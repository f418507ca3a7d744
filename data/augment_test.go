package data

import (
	"fmt"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

func near(a, b float32) bool { return math.Abs(float64(a-b)) < 1e-6 }

func nearBox(a, b BBox) bool {
	return near(a.XMin, b.XMin) && near(a.YMin, b.YMin) && near(a.XMax, b.XMax) && near(a.YMax, b.YMax) && a.Difficult == b.Difficult
}

// The box arithmetic against values worked out by hand.
func TestBBoxArithmetic(t *testing.T) {
	a := BBox{XMin: 0.1, YMin: 0.2, XMax: 0.5, YMax: 0.6}
	b := BBox{XMin: 0.3, YMin: 0.4, XMax: 0.7, YMax: 0.8}
	// Intersection 0.2 x 0.2 = 0.04, union 0.16 + 0.16 - 0.04 = 0.28.
	if got := Jaccard(a, b); !near(got, 0.04/0.28) {
		t.Errorf("Jaccard = %v, want %v", got, 0.04/0.28)
	}
	if got := a.Coverage(b); !near(got, 0.25) {
		t.Errorf("Coverage = %v, want 0.25", got)
	}
	if got := Jaccard(a, BBox{XMin: 0.6, YMin: 0.6, XMax: 0.9, YMax: 0.9}); got != 0 {
		t.Errorf("Jaccard of apart boxes = %v", got)
	}
	if got := (BBox{XMin: -0.2, YMin: 0.5, XMax: 1.3, YMax: 0.7, Difficult: true}).Clip(); !nearBox(got, BBox{0, 0.5, 1, 0.7, true}) {
		t.Errorf("Clip = %+v", got)
	}
	win := BBox{XMin: 0.2, YMin: 0.2, XMax: 0.6, YMax: 0.7}
	if got := win.Locate(BBox{XMin: 0.5, YMin: 0, XMax: 1, YMax: 0.5}); !nearBox(got, BBox{XMin: 0.4, YMin: 0.2, XMax: 0.6, YMax: 0.45}) {
		t.Errorf("Locate = %+v", got)
	}
	// Projected into the window, clipped: x (0.1-0.2)/0.4 -> 0, (0.5-0.2)/0.4 = 0.75; y (0.2-0.2)/0.5 = 0, (0.6-0.2)/0.5 = 0.8.
	if got, ok := win.Project(a); !ok || !nearBox(got, BBox{XMin: 0, YMin: 0, XMax: 0.75, YMax: 0.8}) {
		t.Errorf("Project = %+v, %v", got, ok)
	}
	if _, ok := win.Project(BBox{XMin: 0.7, YMin: 0.1, XMax: 0.9, YMax: 0.3}); ok {
		t.Error("Project of a box outside the window succeeded")
	}
	centre := &caffepb.EmitConstraint{}
	if !meetsEmitConstraint(win, BBox{XMin: 0.1, YMin: 0.3, XMax: 0.5, YMax: 0.5}, centre) { // centre (0.3, 0.4)
		t.Error("CENTER: a box centred inside the window was not kept")
	}
	if meetsEmitConstraint(win, BBox{XMin: 0, YMin: 0.3, XMax: 0.3, YMax: 0.5}, centre) { // centre (0.15, 0.4)
		t.Error("CENTER: a box centred outside the window was kept")
	}
	overlap := &caffepb.EmitConstraint{EmitType: caffepb.EmitConstraint_MIN_OVERLAP.Enum(), EmitOverlap: proto.Float32(0.5)}
	// 0.1..0.5 x 0.3..0.5: the window covers 0.2..0.5, 3/4 of it.
	if !meetsEmitConstraint(win, BBox{XMin: 0.1, YMin: 0.3, XMax: 0.5, YMax: 0.5}, overlap) {
		t.Error("MIN_OVERLAP 0.5: a box covered 3/4 was not kept")
	}
	if meetsEmitConstraint(win, BBox{XMin: 0, YMin: 0.3, XMax: 0.3, YMax: 0.5}, overlap) {
		t.Error("MIN_OVERLAP 0.5: a box covered 1/3 was kept")
	}
}

func TestSampleConstraint(t *testing.T) {
	objs := []Object{{Box: BBox{XMin: 0, YMin: 0, XMax: 0.5, YMax: 0.5}}, {Box: BBox{XMin: 0.5, YMin: 0.5, XMax: 1, YMax: 1}}}
	f := proto.Float32
	window := BBox{XMin: 0, YMin: 0, XMax: 0.5, YMax: 0.5} // the first object exactly
	for _, c := range []struct {
		name string
		c    *caffepb.SampleConstraint
		want bool
	}{
		{"none", &caffepb.SampleConstraint{}, true},
		{"absent", nil, true},
		{"min jaccard 0.9", &caffepb.SampleConstraint{MinJaccardOverlap: f(0.9)}, true},
		{"max jaccard 0.5", &caffepb.SampleConstraint{MaxJaccardOverlap: f(0.5)}, true}, // the second object: 0
		{"min jaccard 0.1, max 0.5", &caffepb.SampleConstraint{MinJaccardOverlap: f(0.1), MaxJaccardOverlap: f(0.5)}, false},
		{"min object coverage 1", &caffepb.SampleConstraint{MinObjectCoverage: f(1)}, true},
		{"max sample coverage 0.5", &caffepb.SampleConstraint{MinSampleCoverage: f(0.1), MaxSampleCoverage: f(0.5)}, false},
		// SSD's quirk: the first object passes the Jaccard test, fails the
		// sample coverage one; found stays set, so the window passes.
		{"quirk", &caffepb.SampleConstraint{MinJaccardOverlap: f(0.9), MaxSampleCoverage: f(0.5)}, true},
	} {
		if got := satisfiesSampleConstraint(window, objs, c.c); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestResizedBox(t *testing.T) {
	b := BBox{XMin: 0.25, YMin: 0.5, XMax: 0.75, YMax: 1}
	r := func(mode caffepb.ResizeParameter_ResizeMode) *caffepb.ResizeParameter {
		return &caffepb.ResizeParameter{ResizeMode: mode.Enum(), Height: proto.Uint32(100), Width: proto.Uint32(100)}
	}
	if got := resizedBox(r(caffepb.ResizeParameter_WARP), 200, 100, b); !nearBox(got, b) {
		t.Errorf("WARP moved the box: %+v", got)
	}
	// A 200 x 100 (w x h) image fitted into 100 x 100: 100 x 50 with 25
	// rows of padding above and below; y 0.5..1 of the image becomes rows
	// 50..75 of the frame.
	if got := resizedBox(r(caffepb.ResizeParameter_FIT_LARGE_SIZE_AND_PAD), 200, 100, b); !nearBox(got, BBox{XMin: 0.25, YMin: 0.5, XMax: 0.75, YMax: 0.75}) {
		t.Errorf("FIT_LARGE_SIZE_AND_PAD: %+v", got)
	}
	if got := resizedBox(r(caffepb.ResizeParameter_FIT_SMALL_SIZE), 200, 100, b); !nearBox(got, b) {
		t.Errorf("FIT_SMALL_SIZE moved the box: %+v", got)
	}
}

func TestDistortions(t *testing.T) {
	// Pure red (B, G, R = 0, 0, 255) is hue 0; +30 (60 degrees) is
	// yellow.
	h, s, v := bgrToHSV(0, 0, 255)
	if h != 0 || s != 255 || v != 255 {
		t.Errorf("red in HSV = %d,%d,%d", h, s, v)
	}
	if b, g, r := hsvToBGR(30, 255, 255); b != 0 || g != 255 || r != 255 {
		t.Errorf("hue 30 = %d,%d,%d, want yellow 0,255,255", b, g, r)
	}
	if b, g, r := hsvToBGR(180+60, 255, 255); b != 0 || g != 255 || r != 0 { // wraps to 60 (120 degrees): green
		t.Errorf("hue 240 = %d,%d,%d, want green 0,255,0", b, g, r)
	}
	// Round trips within a grey level.
	for _, c := range [][3]byte{{10, 200, 30}, {255, 255, 255}, {0, 0, 0}, {90, 91, 92}, {200, 10, 120}} {
		h, s, v := bgrToHSV(c[0], c[1], c[2])
		b, g, r := hsvToBGR(h, s, v)
		for k, got := range []byte{b, g, r} {
			if d := int(got) - int(c[k]); d < -3 || d > 3 {
				t.Errorf("%v -> HSV %d,%d,%d -> %d,%d,%d", c, h, s, v, b, g, r)
			}
		}
	}
	pix := []byte{0, 100, 250, 10, 20, 30, 5, 5, 5}
	d := distortPlan{}
	d.add(distortStep{kind: distortBrightness, v: 10.5})
	d.add(distortStep{kind: distortContrast, v: 0.5})
	d.apply(pix, 3, 3, nil)
	// (v + 10.5) rounded half to even, clamped, then halved and rounded.
	want := []byte{5, 55, 128, 10, 15, 20, 8, 8, 8}
	if fmt.Sprint(pix) != fmt.Sprint(want) {
		t.Errorf("brightness then contrast: %v, want %v", pix, want)
	}
	sat := distortPlan{}
	sat.add(distortStep{kind: distortSaturation, v: 0})
	px := []byte{10, 200, 30}
	sat.apply(px, 3, 1, nil)
	if px[0] != 200 || px[1] != 200 || px[2] != 200 {
		t.Errorf("saturation 0 gives %v, want the grey of the value, 200", px)
	}
	order := distortPlan{}
	order.add(distortStep{kind: distortOrder, perm: [3]int{2, 0, 1}})
	px = []byte{1, 2, 3, 4, 5, 6}
	order.apply(px, 3, 2, nil)
	if fmt.Sprint(px) != fmt.Sprint([]byte{5, 6, 1, 2, 3, 4}) {
		t.Errorf("channel order 2,0,1: %v", px)
	}
}

func TestResamplerModes(t *testing.T) {
	var r Resampler
	flat := make([]byte, 2*5*7)
	for i := range flat {
		flat[i] = 77
	}
	for _, m := range []caffepb.ResizeParameter_InterpMode{caffepb.ResizeParameter_LINEAR, caffepb.ResizeParameter_NEAREST,
		caffepb.ResizeParameter_CUBIC, caffepb.ResizeParameter_LANCZOS4, caffepb.ResizeParameter_AREA} {
		for _, size := range [][2]int{{3, 4}, {11, 13}, {5, 7}} {
			out, err := r.Resize(m, nil, flat, 2, 5, 7, size[0], size[1])
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range out {
				if v != 77 {
					t.Fatalf("%v to %v: pixel %d of a flat image is %d", m, size, i, v)
				}
			}
		}
	}
	// A 4 x 4 ramp halved: AREA averages 2 x 2 cells, NEAREST takes the
	// top-left pixel of each.
	ramp := make([]byte, 16)
	for i := range ramp {
		ramp[i] = byte(10 * i)
	}
	area, _ := r.Resize(caffepb.ResizeParameter_AREA, nil, ramp, 1, 4, 4, 2, 2)
	if fmt.Sprint(area) != "[25 45 105 125]" {
		t.Errorf("AREA 4x4 -> 2x2: %v", area)
	}
	nearest, _ := r.Resize(caffepb.ResizeParameter_NEAREST, nil, ramp, 1, 4, 4, 2, 2)
	if fmt.Sprint(nearest) != "[0 20 80 100]" {
		t.Errorf("NEAREST 4x4 -> 2x2: %v", nearest)
	}
	// A linear ramp stays linear inside under the interpolating kernels.
	row := make([]byte, 32)
	for i := range row {
		row[i] = byte(4 * i)
	}
	for _, m := range []caffepb.ResizeParameter_InterpMode{caffepb.ResizeParameter_CUBIC, caffepb.ResizeParameter_LANCZOS4} {
		out, _ := r.Resize(m, nil, row, 1, 1, 32, 1, 64)
		for x := 8; x < 56; x++ {
			want := 4 * ((float64(x)+0.5)/2 - 0.5)
			if d := float64(out[x]) - want; d < -1 || d > 1 {
				t.Errorf("%v: x=%d gives %d, want %.1f", m, x, out[x], want)
			}
		}
	}
}

// augmenterFor builds an augmenter from a transform_param text and
// batch samplers.
func augmenterFor(t *testing.T, transform string, samplers []*caffepb.BatchSampler, phase caffepb.Phase, seed uint64) *Augmenter[float32] {
	t.Helper()
	tp := &caffepb.TransformationParameter{}
	if err := protoio.ParseText([]byte(transform), tp); err != nil {
		t.Fatal(err)
	}
	a, err := NewAugmenter[float32](tp, samplers, phase, seed)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAugmentMovesBoxesWithPixels checks that, whatever the random
// choices, the boxes follow the pixels: an image holds one bright
// rectangle on a dark ground; after expansion, sampling, resizing,
// cropping and mirroring, the box left for it must cover bright pixels
// and nothing bright may lie outside it.
func TestAugmentMovesBoxesWithPixels(t *testing.T) {
	samplers := []*caffepb.BatchSampler{
		{Sampler: &caffepb.Sampler{MinScale: proto.Float32(0.3), MaxScale: proto.Float32(1), MinAspectRatio: proto.Float32(0.5), MaxAspectRatio: proto.Float32(2)},
			SampleConstraint: &caffepb.SampleConstraint{MinJaccardOverlap: proto.Float32(0.1)}, MaxSample: proto.Uint32(1), MaxTrials: proto.Uint32(50)},
		{Sampler: &caffepb.Sampler{MinScale: proto.Float32(0.3), MaxScale: proto.Float32(1), MinAspectRatio: proto.Float32(0.5), MaxAspectRatio: proto.Float32(2)},
			SampleConstraint: &caffepb.SampleConstraint{MinObjectCoverage: proto.Float32(0.9)}, MaxSample: proto.Uint32(1), MaxTrials: proto.Uint32(50)},
	}
	const W, H = 60, 40
	configs := []string{
		`mirror: true mean_value: 0 resize_param { height: 48 width: 48 resize_mode: WARP interp_mode: NEAREST } expand_param { prob: 0.5 max_expand_ratio: 3 } emit_constraint { emit_type: CENTER }`,
		`mirror: true crop_size: 32 resize_param { height: 48 width: 40 resize_mode: WARP interp_mode: NEAREST } expand_param { prob: 0.5 max_expand_ratio: 2 }`,
		`mirror: true resize_param { height: 50 width: 50 resize_mode: FIT_LARGE_SIZE_AND_PAD interp_mode: NEAREST } expand_param { prob: 0.5 max_expand_ratio: 2 }`,
	}
	for ci, cfg := range configs {
		a := augmenterFor(t, cfg, samplers, caffepb.Phase_TRAIN, uint64(ci+1))
		var s AugmentScratch
		var p AugmentPlan
		kept := 0
		for trial := range 200 {
			x0, y0 := 5+trial%20, 3+trial%15
			x1, y1 := x0+20+trial%13, y0+12+trial%9
			img := DatumRecord{Channels: 1, Height: H, Width: W, Data: make([]byte, H*W)}
			for y := y0; y < y1; y++ {
				for x := x0; x < x1; x++ {
					img.Data[y*W+x] = 255
				}
			}
			obj := Object{Label: 3, Instance: 0, Box: BBox{XMin: float32(x0) / W, YMin: float32(y0) / H, XMax: float32(x1) / W, YMax: float32(y1) / H}}
			if err := a.Plan(&img, []Object{obj}, &p); err != nil {
				t.Fatal(err)
			}
			out := make([]float32, p.Channels*p.Height*p.Width)
			if err := a.Apply(&img, &p, out, &s); err != nil {
				t.Fatal(err)
			}
			checkBoxOverBright(t, fmt.Sprintf("config %d trial %d (rect %d,%d-%d,%d plan %+v)", ci, trial, x0, y0, x1, y1, p), out, p)
			kept += len(p.Objects)
		}
		if kept < 100 {
			t.Errorf("config %d: only %d of 200 boxes kept", ci, kept)
		}
	}
}

// checkBoxOverBright checks a one-channel output image against its boxes:
// at most one box, bright inside (a pixel in from its edges), dark
// outside (a pixel out); without a box, the rectangle must be (nearly)
// gone.
func checkBoxOverBright(t *testing.T, what string, out []float32, p AugmentPlan) {
	t.Helper()
	if len(p.Objects) > 1 {
		t.Fatalf("%s: %d objects from one", what, len(p.Objects))
	}
	w, h := p.Width, p.Height
	var box [4]int
	if len(p.Objects) == 1 {
		o := p.Objects[0]
		if o.Label != 3 {
			t.Fatalf("%s: label %d", what, o.Label)
		}
		b := o.Box
		box = [4]int{int(math.Round(float64(b.XMin * float32(w)))), int(math.Round(float64(b.YMin * float32(h)))),
			int(math.Round(float64(b.XMax * float32(w)))), int(math.Round(float64(b.YMax * float32(h))))}
	}
	bright, inside := 0, 0
	for y := range h {
		for x := range w {
			v := out[y*w+x]
			in := x >= box[0] && x < box[2] && y >= box[1] && y < box[3]
			deepIn := x > box[0] && x < box[2]-1 && y > box[1] && y < box[3]-1
			nearEdge := x >= box[0]-1 && x <= box[2] && y >= box[1]-1 && y <= box[3]
			switch {
			case deepIn && v < 128:
				t.Fatalf("%s: dark pixel (%d,%d) inside the box %v (image %dx%d)", what, x, y, box, w, h)
			case !in && !nearEdge && v > 128:
				bright++
			}
			if in {
				inside++
			}
		}
	}
	// With CENTER emission a rectangle whose centre left the crop loses
	// its box though part of it stays: allow that case only when no box.
	if bright > 0 && len(p.Objects) == 1 {
		t.Fatalf("%s: %d bright pixels outside the box %v", what, bright, box)
	}
}

// SSD's scripts give test nets an empty batch_sampler {}: every trial
// samples the whole image, which then passes unchanged.
func TestEmptyBatchSamplerKeepsTheImage(t *testing.T) {
	a := augmenterFor(t, `mean_value: 1`, []*caffepb.BatchSampler{{}}, caffepb.Phase_TEST, 1)
	img := DatumRecord{Channels: 1, Height: 3, Width: 4, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}
	obj := []Object{{Label: 2, Box: BBox{XMin: 0.25, YMin: 0, XMax: 0.75, YMax: 1}}}
	var p AugmentPlan
	if err := a.Plan(&img, obj, &p); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, 12)
	if err := a.Apply(&img, &p, out, &AugmentScratch{}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(out) != "[0 1 2 3 4 5 6 7 8 9 10 11]" || len(p.Objects) != 1 || !nearBox(p.Objects[0].Box, obj[0].Box) {
		t.Errorf("output %v, objects %+v", out, p.Objects)
	}
}

// FIT_LARGE_SIZE_AND_PAD keeps the aspect and pads: a 2 x 4 image in a
// 4 x 4 frame gets a row above and below, by pad_mode.
func TestFitLargePads(t *testing.T) {
	img := DatumRecord{Channels: 1, Height: 2, Width: 4, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}}
	obj := []Object{{Label: 1, Box: BBox{XMin: 0, YMin: 0, XMax: 0.5, YMax: 1}}}
	for mode, want := range map[string]string{
		"CONSTANT pad_value: 9": "[9 9 9 9 1 2 3 4 5 6 7 8 9 9 9 9]",
		"REPEAT_NEAREST":        "[1 2 3 4 1 2 3 4 5 6 7 8 5 6 7 8]",
		"MIRRORED":              "[5 6 7 8 1 2 3 4 5 6 7 8 1 2 3 4]",
	} {
		a := augmenterFor(t, `resize_param { resize_mode: FIT_LARGE_SIZE_AND_PAD height: 4 width: 4 interp_mode: NEAREST pad_mode: `+mode+` }`, nil, caffepb.Phase_TEST, 1)
		var p AugmentPlan
		if err := a.Plan(&img, obj, &p); err != nil {
			t.Fatal(err)
		}
		out := make([]float32, p.Channels*p.Height*p.Width)
		if err := a.Apply(&img, &p, out, &AugmentScratch{}); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(out); got != want {
			t.Errorf("%s: %s, want %s", mode, got, want)
		}
		// The box keeps its columns and moves into the image's rows.
		if b := p.Objects[0].Box; len(p.Objects) != 1 || !nearBox(b, BBox{XMin: 0, YMin: 0.25, XMax: 0.5, YMax: 0.75}) {
			t.Errorf("%s: objects %+v", mode, p.Objects)
		}
	}
}

// TestCutWindowBesideTheImage: on an expanded canvas a sampled window can
// lie wholly left or right of the image (the fuzzer found a sample left of
// it, whose source column came out at -1); such a window is the mean
// value, whatever rows it spans.
func TestCutWindowBesideTheImage(t *testing.T) {
	a := augmenterFor(t, `mean_value: 7`, nil, caffepb.Phase_TRAIN, 1)
	const c, h, w = 2, 3, 4
	pix := make([]byte, c*h*w)
	for i := range pix {
		pix[i] = byte(100 + i)
	}
	for _, winX := range []int{0, 1, 16, 17} { // the image spans canvas columns 6..9
		p := &AugmentPlan{canvasH: 8, canvasW: 20, offY: 2, offX: 6, winY: 1, winX: winX, winH: 6, winW: 3}
		out := make([]byte, c*p.winH*p.winW)
		a.cutWindow(out, pix, c, h, w, p)
		for i, v := range out {
			if v != 7 {
				t.Fatalf("window at column %d: value %d at %d, want the mean 7 everywhere", winX, v, i)
			}
		}
	}
	// A window over the image's left edge takes its columns.
	p := &AugmentPlan{canvasH: 8, canvasW: 20, offY: 2, offX: 6, winY: 2, winX: 5, winH: 1, winW: 3}
	out := make([]byte, c*p.winW)
	a.cutWindow(out, pix, c, h, w, p)
	if want := []byte{7, 100, 101, 7, 112, 113}; string(out) != string(want) {
		t.Errorf("window over the left edge: %v, want %v", out, want)
	}
}
