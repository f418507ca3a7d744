package solver_test

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/internal/logtest"
	"github.com/gocaffe/gocaffe/solver"
)

// The least-squares solver with momentum, weight decay and a fixed rate,
// so that an SGD update depends on neither the iteration nor anything but
// the gradients and the history, and a run whose k updates were skipped
// equals a run of k iterations fewer.
const scaledSGD = `base_lr: 0.01 lr_policy: "fixed" momentum: 0.9 weight_decay: 0.005 `

// weights returns copies of a solver's learnable parameters.
func weights[T float32 | float64](s *solver.Solver[T]) [][]T {
	var w [][]T
	for _, p := range s.Net().LearnableParams() {
		w = append(w, slices.Clone(p.CPUData()))
	}
	return w
}

// Static loss scaling by a power of two changes no bit of training in
// FP32 or FP64: every gradient is the unscaled one times the scale,
// exactly, and the update divides it out before clipping, the iter_size
// normalisation and weight decay. Asked through the options or through the
// train net's global_grad_scale (NVCaffe's field), and with the adaptive
// field, which in FP32 keeps the scale at K. A scale that is no power of
// two rounds, a little.
func TestStaticLossScaleChangesNothing(t *testing.T) {
	for _, extra := range []string{"", "clip_gradients: 0.05 ", "iter_size: 2 "} {
		base := newSolver32(t, scaledSGD+extra, solver.Options{})
		if err := base.Step(10); err != nil {
			t.Fatal(err)
		}
		want := weights(base)
		for _, c := range []struct {
			name  string
			net   string // fields of the train net
			opts  solver.LossScale
			exact bool
		}{
			{"static 1024", "", solver.LossScale{Mode: solver.LossScaleStatic, Scale: 1024}, true},
			{"static 2^-10", "", solver.LossScale{Mode: solver.LossScaleStatic, Scale: 1.0 / 1024}, true},
			{"global_grad_scale 4096", "global_grad_scale: 4096", solver.LossScale{}, true},
			{"adaptive 256", "global_grad_scale: 256 global_grad_scale_adaptive: true", solver.LossScale{}, true},
			{"dynamic", "", solver.LossScale{Mode: solver.LossScaleDynamic, GrowthInterval: 3}, true},
			{"static 1000", "", solver.LossScale{Mode: solver.LossScaleStatic, Scale: 1000}, false},
		} {
			s := newSolver32Net(t, c.net, scaledSGD+extra, solver.Options{LossScale: c.opts})
			if err := s.Step(10); err != nil {
				t.Fatal(err)
			}
			for i, w := range weights(s) {
				for j, v := range w {
					if c.exact && v != want[i][j] || !c.exact && math.Abs(float64(v-want[i][j])) > 1e-5 {
						t.Errorf("%s%s: param %d[%d] = %v, unscaled %v", extra, c.name, i, j, v, want[i][j])
					}
				}
			}
			if s.SkippedUpdates() != 0 {
				t.Errorf("%s%s: %d updates skipped", extra, c.name, s.SkippedUpdates())
			}
		}
	}
	// The same in FP64.
	base := newSolver(t, scaledSGD)
	scaled := newSolverWith(t, scaledSGD, solver.Options{LossScale: solver.LossScale{Mode: solver.LossScaleStatic, Scale: 1 << 20}})
	for _, s := range []*solver.Solver[float64]{base, scaled} {
		if err := s.Step(10); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := weights(scaled), weights(base); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("FP64: scaled %v, unscaled %v", got, want)
	}
}

// largeData multiplies the least-squares inputs by 100, so that the
// gradients reach the hundreds: times a loss scale of 2^127 they overflow
// float32.
func largeData(s *solver.Solver[float32]) {
	for i, x := range s.Net().BlobByName("data").MutableCPUData() {
		s.Net().BlobByName("data").MutableCPUData()[i] = x * 100
	}
}

// Dynamic loss scaling with a scale too large for the gradients: each
// iteration whose gradients overflow is logged and skipped, the scale
// halves until they fit, and training then goes on as an unscaled run
// that had those iterations fewer, bit for bit.
func TestDynamicLossScaleBacksOffFromOverflow(t *testing.T) {
	var rec logtest.Recorder
	const iters = 30
	huge := math.Ldexp(1, 127)
	// A rate small enough for inputs a hundred times larger.
	const slowSGD = `base_lr: 0.00001 lr_policy: "fixed" momentum: 0.9 weight_decay: 0.005 `
	s := newSolver32(t, slowSGD, solver.Options{Logger: rec.Logger(),
		LossScale: solver.LossScale{Mode: solver.LossScaleDynamic, Scale: huge, GrowthInterval: 1000}})
	largeData(s)
	if err := s.Step(iters); err != nil {
		t.Fatal(err)
	}
	k := s.SkippedUpdates()
	if k < 5 || k > 20 {
		t.Fatalf("%d updates skipped, want a few", k)
	}
	if got, want := s.LossScale(), math.Ldexp(huge, -k); got != want {
		t.Errorf("loss scale %v after %d skips, want %v", got, k, want)
	}
	if s.Iter() != iters {
		t.Errorf("at iteration %d, want %d: skipped iterations count", s.Iter(), iters)
	}
	// Each skip is logged with its iteration and the new scale; the
	// skips came first, in a row.
	for i := range k {
		line := "Iteration " + itoa(i) + ": gradients overflowed (inf or NaN) at loss scale " + g6(math.Ldexp(huge, -i)) + "; skipping the update, loss scale now " + g6(math.Ldexp(huge, -i-1))
		if _, ok := rec.Find(line); !ok {
			t.Errorf("no log line %q", line)
		}
	}
	if _, ok := rec.Find("Iteration " + itoa(k) + ": gradients overflowed"); ok {
		t.Errorf("iteration %d logged as skipped too", k)
	}
	base := newSolver32(t, slowSGD, solver.Options{})
	largeData(base)
	if err := base.Step(iters - k); err != nil {
		t.Fatal(err)
	}
	if got, want := weights(s), weights(base); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("after recovering: %v, an unscaled run of %d iterations %v", got, iters-k, want)
	}
}

// An overflow planted in one iteration's gradients (an infinity or a NaN,
// where a layer's backward pass would put one) skips that iteration's
// update alone and halves the scale; GrowthInterval clean iterations
// double it again.
func TestDynamicLossScalePlantedOverflowAndGrowth(t *testing.T) {
	for _, bad := range []float32{float32(math.Inf(1)), float32(math.NaN())} {
		var rec logtest.Recorder
		s := newSolver32(t, scaledSGD, solver.Options{Logger: rec.Logger(),
			LossScale: solver.LossScale{Mode: solver.LossScaleDynamic, Scale: 1024, GrowthInterval: 3}})
		planted := 4
		s.OnGradientsReady(func(s *solver.Solver[float32]) error {
			if s.Iter() == planted {
				s.Net().LearnableParams()[1].MutableCPUDiff()[0] = bad
			}
			return nil
		})
		// Iterations 0-2 clean: 2048 from iteration 3; 3 clean, 4
		// overflows: 1024; 5, 6, 7 clean: 2048 from 8; 8, 9, 10: 4096.
		var scales []float64
		for range 11 {
			scales = append(scales, s.LossScale())
			if err := s.Step(1); err != nil {
				t.Fatal(err)
			}
		}
		want := []float64{1024, 1024, 1024, 2048, 2048, 1024, 1024, 1024, 2048, 2048, 2048}
		if !slices.Equal(scales, want) || s.LossScale() != 4096 {
			t.Errorf("%v: scales %v then %v, want %v then 4096", bad, scales, s.LossScale(), want)
		}
		if s.SkippedUpdates() != 1 {
			t.Errorf("%v: %d updates skipped, want 1", bad, s.SkippedUpdates())
		}
		for _, line := range []string{
			"Iteration 4: gradients overflowed (inf or NaN) at loss scale 2048; skipping the update, loss scale now 1024",
			"Iteration 2: 3 iterations without overflow; loss scale now 2048",
			"Iteration 10: 3 iterations without overflow; loss scale now 4096",
		} {
			if _, ok := rec.Find(line); !ok {
				t.Errorf("%v: no log line %q", bad, line)
			}
		}
		base := newSolver32(t, scaledSGD, solver.Options{})
		if err := base.Step(10); err != nil {
			t.Fatal(err)
		}
		if got, want := weights(s), weights(base); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%v: %v, an unscaled run of 10 iterations %v", bad, got, want)
		}
	}
}

// Gradients that overflow at every scale stop training after MaxSkips
// skipped updates in a row, rather than shrinking the scale for ever.
func TestDynamicLossScaleGivesUp(t *testing.T) {
	s := newSolver32(t, scaledSGD, solver.Options{LossScale: solver.LossScale{Mode: solver.LossScaleDynamic, MaxSkips: 3}})
	s.OnGradientsReady(func(s *solver.Solver[float32]) error {
		s.Net().LearnableParams()[0].MutableCPUDiff()[1] = float32(math.Inf(-1))
		return nil
	})
	err := s.Step(10)
	if err == nil || !strings.Contains(err.Error(), "3 updates in a row skipped") {
		t.Fatalf("Step: %v, want an error after 3 skips", err)
	}
	if s.Iter() != 2 || s.SkippedUpdates() != 3 {
		t.Errorf("stopped at iteration %d after %d skips", s.Iter(), s.SkippedUpdates())
	}
}

// LossScaleOff overrides the net's global_grad_scale; bad settings and
// fields are errors.
func TestLossScaleSettings(t *testing.T) {
	s := newSolver32Net(t, "global_grad_scale: 64", scaledSGD, solver.Options{})
	if s.LossScale() != 64 || s.Net().LossScale() != 64 {
		t.Errorf("global_grad_scale 64: the solver's scale is %v, the net's %v", s.LossScale(), s.Net().LossScale())
	}
	s = newSolver32Net(t, "global_grad_scale: 64", scaledSGD, solver.Options{LossScale: solver.LossScale{Mode: solver.LossScaleOff}})
	if s.LossScale() != 1 || s.Net().LossScale() != 1 {
		t.Errorf("off: the solver's scale is %v, the net's %v", s.LossScale(), s.Net().LossScale())
	}
	for _, c := range []struct {
		net  string
		opts solver.LossScale
	}{
		{"global_grad_scale: 0", solver.LossScale{}},
		{"global_grad_scale: -8 global_grad_scale_adaptive: true", solver.LossScale{}},
		{"", solver.LossScale{Mode: solver.LossScaleStatic}},
		{"", solver.LossScale{Mode: solver.LossScaleStatic, Scale: math.Inf(1)}},
		{"", solver.LossScale{Mode: solver.LossScaleStatic, Scale: 1e39}}, // beyond float32
		{"", solver.LossScale{Mode: solver.LossScaleDynamic, Backoff: 1}},
		{"", solver.LossScale{Mode: solver.LossScaleDynamic, Growth: 0.5}},
		{"", solver.LossScale{Mode: solver.LossScaleDynamic, GrowthInterval: -1}},
		{"", solver.LossScale{Mode: 42}},
	} {
		if _, err := solver.New[float32](netParam(t, c.net, scaledSGD), solver.Options{LossScale: c.opts}); err == nil {
			t.Errorf("%q %+v accepted", c.net, c.opts)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// g6 formats a scale as the solver logs it.
func g6(v float64) string { return fmt.Sprintf("%.6g", v) }
