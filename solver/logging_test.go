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
	stray := logtest.CaptureDefault(t)
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
	rec.Expect(t,
		logtest.Line{Level: slog.LevelDebug, Message: "Creating training net", File: "solver.go"},
		logtest.Line{Level: slog.LevelDebug, Message: "Creating Layer innerprod", File: "net.go"},
		logtest.Line{Level: slog.LevelInfo, Message: "Iteration 1, lr = 0.1", File: "solver.go"},
		logtest.Line{Level: slog.LevelInfo, Message: "Optimization Done.", File: "solver.go"},
	)
	stray.ExpectNone(t, "slog.Default()")
}
