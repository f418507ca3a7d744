package solver_test

import (
	"log/slog"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/logtest"
	"github.com/gocaffe/gocaffe/solver"
)

// A solver, its nets and their layers log to Options.Logger, not to
// slog.Default(): progress at Info, the details of building at Debug.
func TestLogger(t *testing.T) {
	var stray logtest.Recorder
	prev := slog.Default()
	slog.SetDefault(stray.Logger())
	defer slog.SetDefault(prev)

	var rec logtest.Recorder
	p := solverParam(t, `base_lr: 0.1 lr_policy: "fixed" max_iter: 2 snapshot_after_train: false`)
	p.Display = proto.Int32(1)
	s, err := solver.New[float32](p, solver.Options{Logger: rec.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Solve(""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []logtest.Line{
		{Level: slog.LevelDebug, Message: "Creating training net", File: "solver.go"},
		{Level: slog.LevelDebug, Message: "Creating Layer innerprod", File: "net.go"},
		{Level: slog.LevelInfo, Message: "Iteration 1, lr = 0.1", File: "solver.go"},
		{Level: slog.LevelInfo, Message: "Optimization Done.", File: "solver.go"},
	} {
		if got, ok := rec.Find(want.Message); !ok || got != want {
			t.Errorf("logged %+v (found: %v), want %+v", got, ok, want)
		}
	}
	if lines := stray.Lines(); len(lines) > 0 {
		t.Errorf("the solver logged %d lines to slog.Default(), the first %+v; want none", len(lines), lines[0])
	}
}
