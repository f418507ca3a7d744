package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// TestApplyWindowMatchesApplyPlan: a plan's window (Window) put through
// PixelArithmetic.ApplyWindow gives ApplyPlan's values to the bit, for
// every kind of mean, scale, crop and mirror, in both phases and types.
// The device kernel computes ApplyWindow's expression.
func TestApplyWindowMatchesApplyPlan(t *testing.T) {
	const c, h, w = 3, 7, 9
	mean := make([]float32, c*h*w)
	for i := range mean {
		mean[i] = float32(i%23) * 1.37
	}
	meanPath := writeMean(t, c, h, w, mean)
	params := []string{
		``,
		`scale: 0.00390625`,
		`crop_size: 5 mirror: true mean_value: 104 mean_value: 117 mean_value: 123.5 scale: 0.017`,
		`crop_size: 4 mirror: true mean_value: 100`,
		`crop_size: 6 mirror: true scale: 0.3 mean_file: "` + meanPath + `"`,
		`mirror: true mean_file: "` + meanPath + `"`,
	}
	for _, text := range params {
		for _, phase := range []caffepb.Phase{caffepb.Phase_TRAIN, caffepb.Phase_TEST} {
			name := fmt.Sprintf("%s/%v", text, phase)
			t.Run(name+"/float32", func(t *testing.T) { checkApplyWindow[float32](t, text, phase) })
			t.Run(name+"/float64", func(t *testing.T) { checkApplyWindow[float64](t, text, phase) })
		}
	}
}

func checkApplyWindow[T float32 | float64](t *testing.T, text string, phase caffepb.Phase) {
	const c, h, w = 3, 7, 9
	planner, applier := newTF[T](t, text, phase, 5), newTF[T](t, text, phase, 5)
	arith, ok := applier.PixelArithmetic()
	if !ok {
		t.Fatal("PixelArithmetic: false for a plain transformation")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for item := range 20 {
		raw := &DatumRecord{Channels: c, Height: h, Width: w, Data: make([]byte, c*h*w)}
		for i := range raw.Data {
			raw.Data[i] = byte(rng.IntN(256))
		}
		oc, oh, ow, err := planner.ItemShape(raw)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]T, oc*oh*ow)
		plan, err := planner.PlanImage(raw, len(want))
		if err != nil {
			t.Fatal(err)
		}
		planner.ApplyPlan(raw, plan, want)
		window := make([]byte, plan.WindowSize())
		if !plan.Window(raw, window) {
			t.Fatal("Window: false for an 8-bit image")
		}
		mirror, hOff, wOff := plan.Placement()
		got := make([]T, len(want))
		arith.ApplyWindow(window, oc, oh, ow, mirror, hOff, wOff, got)
		for i := range want {
			if math.Float64bits(float64(got[i])) != math.Float64bits(float64(want[i])) {
				t.Fatalf("item %d value %d: ApplyWindow %v, ApplyPlan %v", item, i, got[i], want[i])
			}
		}
	}
	// Float data and TSN's resized windows are not for the device.
	floats := &DatumRecord{Channels: c, Height: h, Width: w, FloatData: make([]float32, c*h*w)}
	if oc, oh, ow, err := planner.ItemShape(floats); err == nil {
		plan, err := planner.PlanImage(floats, oc*oh*ow)
		if err != nil {
			t.Fatal(err)
		}
		if plan.FitsWindow(floats) || plan.Window(floats, make([]byte, plan.WindowSize())) {
			t.Error("a float datum fits a window")
		}
	}
	if _, ok := newTF[T](t, `crop_size: 4 multi_scale: true`, caffepb.Phase_TRAIN, 1).PixelArithmetic(); ok {
		t.Error("PixelArithmetic: true for TSN's multi_scale")
	}
}

// TestPlanPixelsDrawsPlanImagesPlans: planning an image from its size
// alone (a JPEG decoded later on the device) draws the crops and mirrors
// that planning the decoded image draws, and refuses what PlanImage
// refuses.
func TestPlanPixelsDrawsPlanImagesPlans(t *testing.T) {
	const c, h, w = 3, 7, 9
	for _, text := range []string{`crop_size: 5 mirror: true`, `mirror: true mean_value: 3`, `crop_size: 7 mirror: true`} {
		byImage, bySize := newTF[float32](t, text, caffepb.Phase_TRAIN, 11), newTF[float32](t, text, caffepb.Phase_TRAIN, 11)
		raw := &DatumRecord{Channels: c, Height: h, Width: w, Data: make([]byte, c*h*w)}
		oc, oh, ow, err := byImage.ItemShape(raw)
		if err != nil {
			t.Fatal(err)
		}
		for item := range 30 {
			want, err := byImage.PlanImage(raw, oc*oh*ow)
			if err != nil {
				t.Fatal(err)
			}
			got, err := bySize.PlanPixels(c, h, w, oc*oh*ow)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("%s: item %d planned %+v from its size, %+v from its pixels", text, item, got, want)
			}
		}
	}
	tf := newTF[float32](t, `crop_size: 8`, caffepb.Phase_TRAIN, 1)
	if _, err := tf.PlanPixels(3, 7, 9, 3*8*8); err == nil {
		t.Error("PlanPixels of a 7x9 image with crop_size 8: no error")
	}
	if _, err := tf.PlanPixels(0, 9, 9, 0); err == nil {
		t.Error("PlanPixels of 0 channels: no error")
	}
}
