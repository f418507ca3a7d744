package solver_test

import (
	"math"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/internal/logtest"
	"github.com/gocaffe/gocaffe/solver"
)

// On the GPU as on the host: an overflow planted in one iteration's
// gradients skips that update alone, logged, and halves the scale, which
// clean iterations grow again; the weights are those of an unscaled run
// one iteration shorter, bit for bit (scales are powers of two).
func TestDynamicLossScaleOnGPU(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	var rec logtest.Recorder
	s := newSolver32(t, scaledSGD, solver.Options{Context: ctx, Logger: rec.Logger(),
		LossScale: solver.LossScale{Mode: solver.LossScaleDynamic, Scale: 1024, GrowthInterval: 3}})
	s.OnGradientsReady(func(s *solver.Solver[float32]) error {
		if s.Iter() == 4 {
			s.Net().LearnableParams()[1].MutableCPUDiff()[0] = float32(math.Inf(1))
		}
		return nil
	})
	var scales []float64
	for range 11 {
		scales = append(scales, s.LossScale())
		if err := s.Step(1); err != nil {
			t.Fatal(err)
		}
	}
	want := []float64{1024, 1024, 1024, 2048, 2048, 1024, 1024, 1024, 2048, 2048, 2048}
	if !slices.Equal(scales, want) || s.SkippedUpdates() != 1 {
		t.Errorf("scales %v, %d skipped; want %v, 1 skipped", scales, s.SkippedUpdates(), want)
	}
	if _, ok := rec.Find("Iteration 4: gradients overflowed (inf or NaN) at loss scale 2048; skipping the update, loss scale now 1024"); !ok {
		t.Error("no log line for the skipped update")
	}
	base := newSolver32(t, scaledSGD, solver.Options{Context: device.New(cudatest.Device(t))})
	if err := base.Step(10); err != nil {
		t.Fatal(err)
	}
	if got, want := weights(s), weights(base); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("weights %v, an unscaled run of 10 iterations %v", got, want)
	}
}
