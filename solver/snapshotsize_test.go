package solver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// The size rule of binary snapshots, at its edge: 2 GiB - 1 bytes can be
// read back, one byte more cannot, in either file.
func TestCheckBinarySnapshot(t *testing.T) {
	const limit = 1<<31 - 1
	if err := checkBinarySnapshot("m.caffemodel", "s.solverstate", limit, limit); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	for _, c := range []struct {
		model, state int64
		file         string
	}{{limit + 1, 0, "m.caffemodel"}, {0, limit + 1, "s.solverstate"}, {5 << 30, 5 << 30, "m.caffemodel"}} {
		err := checkBinarySnapshot("m.caffemodel", "s.solverstate", c.model, c.state)
		if err == nil || !strings.Contains(err.Error(), c.file) || !strings.Contains(err.Error(), "snapshot_format: HDF5") {
			t.Errorf("%d and %d bytes: err = %v, want one naming %s and snapshot_format: HDF5", c.model, c.state, err, c.file)
		}
	}
}

// withBinaryLimit lowers the binary snapshot limit to limit bytes for the
// test, so that a small net crosses it as a 2 GiB one would.
func withBinaryLimit(t *testing.T, limit int64) {
	old := binaryLimit
	binaryLimit = limit
	t.Cleanup(func() { binaryLimit = old })
}

// sizeTestSolver builds a solver of one inner product of 8x16 weights
// (512 bytes in float32) with extra solver fields.
func sizeTestSolver(t *testing.T, prefix, extra string) (*Solver[float32], error) {
	t.Helper()
	p := &caffepb.SolverParameter{}
	text := `net_param { name: "Small"
  layer { name: "data" type: "DummyData" top: "x" top: "y" dummy_data_param { shape { dim: 2 dim: 16 } shape { dim: 2 dim: 8 } } }
  layer { name: "ip" type: "InnerProduct" bottom: "x" top: "z" inner_product_param { num_output: 8 bias_term: false weight_filler { type: "gaussian" } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "z" bottom: "y" top: "loss" } }
random_seed: 1701 base_lr: 0.1 momentum: 0.9 lr_policy: "fixed" max_iter: 10 snapshot_prefix: "` + prefix + `" ` + extra
	if err := protoio.ParseText([]byte(text), p); err != nil {
		t.Fatal(err)
	}
	return New[float32](p, Options{})
}

// A net whose binary snapshot could not be read back is refused before
// training (a limit of 300 bytes stands for 2 GiB here), with an error
// naming the file, snapshot_format and HDF5; in HDF5, or never
// snapshotting, it builds.
func TestSnapshotTooLargeRefusedAtStart(t *testing.T) {
	withBinaryLimit(t, 300)
	prefix := filepath.Join(t.TempDir(), "big")
	_, err := sizeTestSolver(t, prefix, "")
	if err == nil || !strings.Contains(err.Error(), "big_iter_0.caffemodel would be 512 bytes") || !strings.Contains(err.Error(), "snapshot_format: HDF5") {
		t.Errorf("err = %v, want a refusal naming the file, its size and snapshot_format: HDF5", err)
	}
	for _, extra := range []string{"snapshot_format: HDF5", "snapshot_after_train: false"} {
		s, err := sizeTestSolver(t, prefix, extra)
		if err != nil {
			t.Errorf("%s: %v", extra, err)
			continue
		}
		s.Close()
	}
}

// A snapshot that has outgrown the limit since the start (a net reshaped,
// or one asked for while snapshot_after_train is off) is refused whole,
// before either file is written, and the snapshot before it stays.
func TestSnapshotTooLargeWritesNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := sizeTestSolver(t, filepath.Join(dir, "grow"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Step(1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if err := s.Step(1); err != nil {
		t.Fatal(err)
	}
	withBinaryLimit(t, 300)
	if _, _, err := s.Snapshot(); err == nil || !strings.Contains(err.Error(), "grow_iter_2.caffemodel") {
		t.Errorf("err = %v, want a refusal naming grow_iter_2.caffemodel", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*grow_iter_*"))
	for i := range files {
		files[i] = filepath.Base(files[i])
	}
	if strings.Join(files, " ") != "grow_iter_1.caffemodel grow_iter_1.solverstate" {
		t.Errorf("files after the refused snapshot: %v, want iteration 1's alone", files)
	}
	if _, err := os.Stat(filepath.Join(dir, "grow_iter_1.caffemodel")); err != nil {
		t.Error(err)
	}
}
