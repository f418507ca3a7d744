package solver_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/solver"
)

// actionAt returns an action function that asks for a at its call-th call
// and for nothing otherwise, and a pointer to its count of calls.
func actionAt(call int, a solver.Action) (func() solver.Action, *int) {
	calls := 0
	return func() solver.Action {
		if calls++; calls == call {
			return a
		}
		return solver.None
	}, &calls
}

// A stop asked for during an iteration of a huge iter_size is obeyed
// between its passes, not after all of them: the iteration is dropped (no
// update, the iteration count stays), and the final snapshot holds the
// weights from before it.
func TestStopBetweenIterSizePasses(t *testing.T) {
	dir := t.TempDir()
	s := newSolver(t, `base_lr: 0.05 lr_policy: "fixed" max_iter: 3 iter_size: 100000 snapshot_after_train: true snapshot_prefix: "`+filepath.Join(dir, "big")+`"`)
	before := slices.Clone(s.Net().LearnableParams()[0].CPUData())
	act, calls := actionAt(3, solver.Stop)
	s.SetActionFunc(act)
	if err := s.Solve(""); err != nil {
		t.Fatal(err)
	}
	if s.Iter() != 0 || *calls != 3 {
		t.Errorf("stopped at iteration %d after %d requests; want iteration 0 after the third request (between passes 3 and 4)", s.Iter(), *calls)
	}
	if got := s.Net().LearnableParams()[0].CPUData(); !slices.Equal(got, before) {
		t.Errorf("the unfinished iteration changed the weights: %v, were %v", got, before)
	}
	if _, err := os.Stat(filepath.Join(dir, "big_iter_0.solverstate")); err != nil {
		t.Errorf("no snapshot after the stop: %v", err)
	}
}

// A snapshot asked for between passes is written at the end of that
// iteration, with its weights, and training goes on.
func TestSnapshotBetweenIterSizePasses(t *testing.T) {
	dir := t.TempDir()
	s := newSolver(t, `base_lr: 0.05 lr_policy: "fixed" max_iter: 3 iter_size: 4 snapshot_prefix: "`+filepath.Join(dir, "hup")+`"`)
	act, _ := actionAt(2, solver.Snapshot)
	s.SetActionFunc(act)
	if err := s.Solve(""); err != nil {
		t.Fatal(err)
	}
	if s.Iter() != 3 {
		t.Errorf("training ended at iteration %d, want 3", s.Iter())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "hup_iter_*"))
	for i := range files {
		files[i] = filepath.Base(files[i])
	}
	if want := []string{"hup_iter_1.caffemodel", "hup_iter_1.solverstate"}; !slices.Equal(files, want) {
		t.Errorf("snapshots %v, want %v", files, want)
	}
}
