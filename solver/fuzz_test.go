package solver_test

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/fuzzguard"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
)

// fuzzNet is the net of the solver fuzz targets: small, with a test phase.
const fuzzNet = `net_param {
  layer { name: "d" type: "DummyData" top: "x" top: "y" dummy_data_param { shape { dim: 4 dim: 3 } shape { dim: 4 dim: 2 } data_filler { type: "gaussian" } } }
  layer { name: "ip" type: "InnerProduct" bottom: "x" top: "ip" inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "y" top: "loss" }
}
`

// FuzzSolverPrototxt builds and runs whatever solver text parses (given
// the fuzz net when it names none), snapshots going to a temporary
// directory: errors are fine, a panic or a hang is not.
func FuzzSolverPrototxt(f *testing.F) {
	for _, s := range []string{
		`base_lr: 0.1 lr_policy: "fixed" max_iter: 3 display: 1`,
		`type: "Adam" base_lr: 0.01 momentum: 0.9 momentum2: 0.999 lr_policy: "step" gamma: 0.5 stepsize: 2 max_iter: 4 test_iter: 1 test_interval: 2 test_initialization: true`,
		`solver_type: NESTEROV base_lr: 0.01 momentum: 0.9 lr_policy: "multistep" stepvalue: 1 stepvalue: 3 max_iter: 5 iter_size: 2 clip_gradients: 1 regularization_type: "L1" weight_decay: 0.001 snapshot: 2`,
		`type: "AdaDelta" base_lr: 1 delta: 1e-6 lr_policy: "poly" power: 2 max_iter: 3 average_loss: 2 snapshot_format: HDF5 snapshot: 1`,
		`type: "RMSProp" rms_decay: 0.9 base_lr: 0.01 lr_policy: "sigmoid" stepsize: 2 gamma: -1 max_iter: 3`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var p caffepb.SolverParameter
		if protoio.ParseText([]byte(text), &p) != nil {
			return
		}
		if p.Net == nil && p.NetParam == nil && p.TrainNet == nil && p.TrainNetParam == nil {
			var withNet caffepb.SolverParameter
			if err := protoio.ParseText([]byte(fuzzNet), &withNet); err != nil {
				t.Fatal(err)
			}
			p.NetParam = withNet.NetParam
		}
		if !fuzzguard.Affordable(&p) {
			return
		}
		p.SnapshotPrefix = proto.String(filepath.Join(t.TempDir(), "fuzz"))
		// A few iterations and test passes reach every code path; more
		// only make an execution slow.
		p.MaxIter = proto.Int32(min(p.GetMaxIter(), 4))
		p.IterSize = proto.Int32(min(p.GetIterSize(), 2))
		for i, n := range p.TestIter {
			p.TestIter[i] = min(n, 2)
		}
		s, err := solver.New[float32](&p, solver.Options{})
		if err != nil {
			return
		}
		defer s.Close()
		s.Solve("")
	})
}

// FuzzSolverState restores whatever bytes a .solverstate file holds into
// an SGD solver and takes a step: errors are fine, a panic is not.
func FuzzSolverState(f *testing.F) {
	var p caffepb.SolverParameter
	if err := protoio.ParseText([]byte(fuzzNet+`base_lr: 0.1 momentum: 0.9 lr_policy: "multistep" stepvalue: 2 max_iter: 4`), &p); err != nil {
		f.Fatal(err)
	}
	dir := f.TempDir()
	p.SnapshotPrefix = proto.String(filepath.Join(dir, "seed"))
	s, err := solver.New[float32](&p, solver.Options{})
	if err != nil {
		f.Fatal(err)
	}
	if err := s.Step(2); err != nil {
		f.Fatal(err)
	}
	_, state, err := s.Snapshot()
	if err != nil {
		f.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(state)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/3])
	f.Fuzz(func(t *testing.T, b []byte) {
		tmp := t.TempDir()
		q := proto.Clone(&p).(*caffepb.SolverParameter)
		q.SnapshotPrefix = proto.String(filepath.Join(tmp, "fuzz"))
		s, err := solver.New[float32](q, solver.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		path := filepath.Join(tmp, "x.solverstate")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if s.Restore(path) == nil {
			s.Step(1)
		}
	})
}
