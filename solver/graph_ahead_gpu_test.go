package solver_test

import (
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/solver"
)

// aheadRuns trains text three ways on ctx with steps: replaying graphs
// with the host one replay ahead (the default), replaying them in
// lockstep (NoHostAhead), and without graphs; it returns the solvers and
// their logs in that order.
func aheadRuns(t *testing.T, ctx *device.Context, text string, steps func(*solver.Solver[float32]) error) ([3]*solver.Solver[float32], [3]string) {
	t.Helper()
	var s [3]*solver.Solver[float32]
	var logs [3]string
	for i, o := range []solver.Options{{Context: ctx}, {Context: ctx, NoHostAhead: true}, {Context: ctx, NoCUDAGraphs: true}} {
		s[i], logs[i] = graphRunWith(t, text, o, steps)
	}
	if !strings.Contains(logs[0], "the host one replay ahead") {
		t.Fatalf("the default run does not say it runs ahead:\n%s", logs[0])
	}
	if strings.Contains(logs[1], "the host one replay ahead") {
		t.Errorf("the NoHostAhead run says it runs ahead:\n%s", logs[1])
	}
	return s, logs
}

// With the host one replay ahead, a run gives the losses, smoothed over
// average_loss iterations that were read back late, and the weights of
// the same run in lockstep and without graphs: with DummyData refilled on
// the host, and with a Data layer whose prefetched batches the host takes
// while the replay before still reads the last one; across two Step calls
// and a snapshot in the middle, where nothing may be left running.
func TestCUDAGraphHostAhead(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	settings := "display: 4 average_loss: 3 snapshot: 9 snapshot_prefix: \"" + t.TempDir() + "/a\""
	for _, c := range []struct{ name, text string }{
		{"DummyData", graphNet},
		{"Data", strings.Replace(dataNet, "SOURCE", writeDatums(t, 64), 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(c.text, "display: 1", settings, 1)
			steps := func(s *solver.Solver[float32]) error {
				if err := s.Step(6); err != nil {
					return err
				}
				return s.Step(8)
			}
			s, logs := aheadRuns(t, ctx, text, steps)
			// Displays at iterations 0 and 4 of the first Step, 8 and 12 of
			// the second, each with its Step's smoothed loss.
			sameLosses(t, logs[0], logs[1], 4)
			sameLosses(t, logs[0], logs[2], 4)
			for i := range 3 {
				if !strings.Contains(logs[i], "a_iter_9.caffemodel") {
					t.Errorf("run %d wrote no snapshot at iteration 9:\n%s", i, logs[i])
				}
			}
			closeParams(t, s[0], s[1], 1e-5)
			closeParams(t, s[0], s[2], 1e-5)
		})
	}
}

// A NaN loss in an iteration the host ran ahead of (a label that is no
// class) stops training with the error naming that iteration and its
// cause, as in lockstep; a stop requested after
// an iteration stops both at the same iteration with the same weights.
func TestCUDAGraphHostAheadStops(t *testing.T) {
	ctx := device.New(cudatest.Device(t))
	text := strings.Replace(inputNet, "display: 1", "display: 0", 1)
	var errs [2]string
	for i, o := range []solver.Options{{Context: ctx}, {Context: ctx, NoHostAhead: true}} {
		graphRunWith(t, text, o, func(s *solver.Solver[float32]) error {
			if err := fillInput(s, 16, 1); err != nil {
				return err
			}
			if err := s.Step(5); err != nil {
				return err
			}
			// No class: the loss comes out NaN on the device and the
			// loss layer says why once asked.
			s.Net().BlobByName("label").MutableCPUData()[5] = 7
			err := s.Step(5)
			if err == nil {
				t.Fatalf("run %d: a bad label trained on", i)
			}
			errs[i] = err.Error()
			return nil
		})
	}
	if !strings.HasPrefix(errs[0], "iteration 5: ") || !strings.Contains(errs[0], "label 7 at position 5") || errs[0] != errs[1] {
		t.Errorf("running ahead: %q; in lockstep: %q; want both to name iteration 5 and the bad label", errs[0], errs[1])
	}

	var s [2]*solver.Solver[float32]
	for i, o := range []solver.Options{{Context: ctx}, {Context: ctx, NoHostAhead: true}} {
		s[i], _ = graphRunWith(t, text, o, func(s *solver.Solver[float32]) error {
			if err := fillInput(s, 16, 2); err != nil {
				return err
			}
			calls := 0
			s.SetActionFunc(func() solver.Action {
				if calls++; calls == 7 {
					return solver.Stop
				}
				return solver.None
			})
			return s.Step(12)
		})
		if s[i].Iter() != 7 {
			t.Errorf("run %d stopped after iteration %d, want 7", i, s[i].Iter())
		}
	}
	closeParams(t, s[0], s[1], 1e-5)
}
