package solver_test

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/internal/h5pytest"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // the nets' and solvers' logs
	os.Exit(m.Run())
}

const (
	numSamples = 8
	numInputs  = 3
)

// leastSquaresNet is Caffe's gradient-based solver test net: an inner
// product of fixed inputs regressed on fixed targets by a euclidean loss.
const leastSquaresNet = `
net_param {
  name: "LeastSquares"
  layer { name: "data" type: "Input" top: "data" top: "targets"
    input_param { shape { dim: 8 dim: 3 } shape { dim: 8 dim: 1 } } }
  layer { name: "innerprod" type: "InnerProduct" bottom: "data" top: "innerprod"
    inner_product_param { num_output: 1 weight_filler { type: "gaussian" std: 1 } bias_filler { type: "gaussian" std: 1 } } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "innerprod" bottom: "targets" top: "loss" }
}
random_seed: 1701
display: 0
`

// newSolver builds a least-squares solver from extra solver fields and
// fills the data and targets.
func newSolver(t *testing.T, extra string) *solver.Solver[float64] {
	t.Helper()
	return newSolverWith(t, extra, solver.Options{})
}

// newSolverWith is newSolver with options.
func newSolverWith(t *testing.T, extra string, opts solver.Options) *solver.Solver[float64] {
	t.Helper()
	if !strings.Contains(extra, "snapshot_after_train") {
		extra += " snapshot_after_train: false"
	}
	s, err := solver.New[float64](solverParam(t, extra), opts)
	if err != nil {
		t.Fatal(err)
	}
	data, targets := s.Net().BlobByName("data"), s.Net().BlobByName("targets")
	mathfn.RngGaussian(data.Count(), 0, 1, data.MutableCPUData(), mathfn.NewRNG(1))
	mathfn.RngGaussian(targets.Count(), 0, 1, targets.MutableCPUData(), mathfn.NewRNG(2))
	return s
}

// solverParam parses the least-squares solver with extra fields.
func solverParam(t *testing.T, extra string) *caffepb.SolverParameter {
	t.Helper()
	p := &caffepb.SolverParameter{}
	if err := protoio.ParseText([]byte(leastSquaresNet+extra), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// rule is an update rule computed here, independently of the solver, from
// the published formulas (Caffe's test recomputes them the same way).
type rule struct {
	typ                          string
	lr, momentum, momentum2      float64
	decay, delta, rmsDecay, clip float64
	l1                           bool
	h, h2                        [][]float64 // history per parameter
}

// gradients returns the least-squares gradients of the weights and bias at
// (w, b): loss = sum((x.w + b - y)^2) / (2N).
func gradients(x, y, w []float64, b float64) ([]float64, float64) {
	dw := make([]float64, len(w))
	var db float64
	for n := range numSamples {
		pred := b
		for k := range numInputs {
			pred += x[n*numInputs+k] * w[k]
		}
		r := (pred - y[n]) / numSamples
		for k := range numInputs {
			dw[k] += r * x[n*numInputs+k]
		}
		db += r
	}
	return dw, db
}

// step applies one update to the parameters (param 0 the weights, param 1
// the bias, lr_mult 1 and decay_mult 1 for both as the net sets them) at
// iteration iter.
func (r *rule) step(params [][]float64, grads [][]float64, iter int) {
	if r.h == nil {
		for _, p := range params {
			r.h, r.h2 = append(r.h, make([]float64, len(p))), append(r.h2, make([]float64, len(p)))
		}
	}
	if r.clip > 0 {
		var sumsq float64
		for _, g := range grads {
			for _, v := range g {
				sumsq += v * v
			}
		}
		if norm := math.Sqrt(sumsq); norm > r.clip {
			for _, g := range grads {
				for i := range g {
					g[i] *= r.clip / norm
				}
			}
		}
	}
	for p := range params {
		for i := range params[p] {
			w, g := params[p][i], grads[p][i]
			if r.l1 {
				g += r.decay * sign(w)
			} else {
				g += r.decay * w
			}
			h, h2 := &r.h[p][i], &r.h2[p][i]
			var update float64
			switch r.typ {
			case "SGD":
				*h = r.momentum**h + r.lr*g
				update = *h
			case "Nesterov":
				prev := *h
				*h = r.momentum**h + r.lr*g
				update = (1+r.momentum)**h - r.momentum*prev
			case "AdaGrad":
				*h += g * g
				update = r.lr * g / (math.Sqrt(*h) + r.delta)
			case "RMSProp":
				*h = r.rmsDecay**h + (1-r.rmsDecay)*g*g
				update = r.lr * g / (math.Sqrt(*h) + r.delta)
			case "AdaDelta":
				*h = r.momentum**h + (1-r.momentum)*g*g
				u := g * math.Sqrt((*h2+r.delta)/(*h+r.delta))
				*h2 = r.momentum**h2 + (1-r.momentum)*u*u
				update = r.lr * u
			case "Adam":
				*h = r.momentum**h + (1-r.momentum)*g
				*h2 = r.momentum2**h2 + (1-r.momentum2)*g*g
				t := float64(iter + 1)
				corr := math.Sqrt(1-math.Pow(r.momentum2, t)) / (1 - math.Pow(r.momentum, t))
				update = r.lr * corr * *h / (math.Sqrt(*h2) + r.delta)
			}
			params[p][i] = w - update
		}
	}
}

// asStored returns the rule with its hyperparameters rounded to float32, as
// SolverParameter stores them: the solver computes with those values.
func (r rule) asStored() rule {
	for _, v := range []*float64{&r.lr, &r.momentum, &r.momentum2, &r.decay, &r.delta, &r.rmsDecay, &r.clip} {
		*v = float64(float32(*v))
	}
	return r
}

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// checkUpdates runs the solver iters iterations, one at a time, and checks
// its weights against the rule after each.
func checkUpdates(t *testing.T, s *solver.Solver[float64], r *rule, iters int) {
	t.Helper()
	x := s.Net().BlobByName("data").CPUData()
	y := s.Net().BlobByName("targets").CPUData()
	lp := s.Net().LearnableParams()
	params := [][]float64{slices.Clone(lp[0].CPUData()), slices.Clone(lp[1].CPUData())}
	for it := range iters {
		dw, db := gradients(x, y, params[0], params[1][0])
		r.step(params, [][]float64{dw, {db}}, it)
		if err := s.Step(1); err != nil {
			t.Fatal(err)
		}
		for p := range params {
			for i, want := range params[p] {
				got := lp[p].CPUData()[i]
				if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Fatalf("%s iteration %d: param %d[%d] = %.12g, want %.12g", r.typ, it, p, i, got, want)
				}
			}
		}
	}
}

// updateRuleCases are the rules and settings TestUpdateRules checks.
var updateRuleCases = []struct {
	name, extra string
	rule        rule
}{
	{"SGD", `base_lr: 0.1 lr_policy: "fixed"`, rule{typ: "SGD", lr: 0.1}},
	{"SGD/momentum", `base_lr: 0.1 lr_policy: "fixed" momentum: 0.9`, rule{typ: "SGD", lr: 0.1, momentum: 0.9}},
	{"SGD/weight_decay", `base_lr: 0.1 lr_policy: "fixed" momentum: 0.5 weight_decay: 0.2`, rule{typ: "SGD", lr: 0.1, momentum: 0.5, decay: 0.2}},
	{"SGD/L1", `base_lr: 0.1 lr_policy: "fixed" weight_decay: 0.3 regularization_type: "L1"`, rule{typ: "SGD", lr: 0.1, decay: 0.3, l1: true}},
	{"SGD/clip", `base_lr: 0.1 lr_policy: "fixed" momentum: 0.9 clip_gradients: 0.1`, rule{typ: "SGD", lr: 0.1, momentum: 0.9, clip: 0.1}},
	{"SGD/iter_size", `base_lr: 0.1 lr_policy: "fixed" momentum: 0.9 iter_size: 3`, rule{typ: "SGD", lr: 0.1, momentum: 0.9}},
	{"Nesterov", `type: "Nesterov" base_lr: 0.1 lr_policy: "fixed" momentum: 0.9 weight_decay: 0.1`, rule{typ: "Nesterov", lr: 0.1, momentum: 0.9, decay: 0.1}},
	{"AdaGrad", `type: "AdaGrad" base_lr: 0.2 lr_policy: "fixed" weight_decay: 0.1`, rule{typ: "AdaGrad", lr: 0.2, decay: 0.1, delta: 1e-8}},
	{"RMSProp", `type: "RMSProp" base_lr: 0.05 lr_policy: "fixed" rms_decay: 0.95 delta: 1e-6`, rule{typ: "RMSProp", lr: 0.05, rmsDecay: 0.95, delta: 1e-6}},
	{"AdaDelta", `type: "AdaDelta" base_lr: 1 lr_policy: "fixed" momentum: 0.95 delta: 1e-6 weight_decay: 0.1`, rule{typ: "AdaDelta", lr: 1, momentum: 0.95, delta: 1e-6, decay: 0.1}},
	{"Adam", `type: "Adam" base_lr: 0.01 lr_policy: "fixed" momentum: 0.9 momentum2: 0.999`, rule{typ: "Adam", lr: 0.01, momentum: 0.9, momentum2: 0.999, delta: 1e-8}},
	{"Adam/legacy_solver_type", `solver_type: ADAM base_lr: 0.01 lr_policy: "fixed" momentum: 0.9`, rule{typ: "Adam", lr: 0.01, momentum: 0.9, momentum2: 0.999, delta: 1e-8}},
}

func TestUpdateRules(t *testing.T) {
	for _, c := range updateRuleCases {
		t.Run(c.name, func(t *testing.T) {
			r := c.rule.asStored()
			checkUpdates(t, newSolver(t, c.extra), &r, 5)
		})
	}
}

// Training is resumable: snapshot after 3 iterations, go on to 6; a new
// solver restored from the snapshot and run to 6 has the same weights and
// history, bit for bit.
func TestSnapshotRestoreEqualsUninterrupted(t *testing.T) {
	for _, format := range []string{"BINARYPROTO", "HDF5", "COMPACT"} {
		for _, typ := range []string{"SGD", "Nesterov", "AdaDelta", "Adam"} {
			t.Run(format+"/"+typ, func(t *testing.T) { snapshotRestore(t, format, typ) })
		}
	}
}

func snapshotRestore(t *testing.T, format, typ string) {
	dir := t.TempDir()
	written := format
	if format == "COMPACT" { // NVCaffe's raw_data, in binary files
		written = "BINARYPROTO store_blobs_in_old_format: false"
	}
	extra := `type: "` + typ + `" base_lr: 0.05 lr_policy: "step" gamma: 0.5 stepsize: 2 momentum: 0.9 weight_decay: 0.01 snapshot_format: ` + written + ` snapshot_prefix: "` + filepath.Join(dir, "ls") + `"`
	a := newSolver(t, extra)
	if err := a.Step(3); err != nil {
		t.Fatal(err)
	}
	_, state, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := "ls_iter_3.solverstate"
	if format == "HDF5" {
		want += ".h5"
	}
	if filepath.Base(state) != want {
		t.Errorf("snapshot named %s", state)
	}
	if err := a.Step(3); err != nil {
		t.Fatal(err)
	}
	b := newSolver(t, extra)
	if err := b.Restore(state); err != nil {
		t.Fatal(err)
	}
	if b.Iter() != 3 {
		t.Fatalf("restored at iteration %d, want 3", b.Iter())
	}
	if err := b.Step(3); err != nil {
		t.Fatal(err)
	}
	for i, p := range a.Net().LearnableParams() {
		if !slices.Equal(p.CPUData(), b.Net().LearnableParams()[i].CPUData()) {
			t.Errorf("param %d: resumed %v, uninterrupted %v", i, b.Net().LearnableParams()[i].CPUData(), p.CPUData())
		}
	}
}

// HDF5 snapshots have Caffe's layout, read by h5py: the weights under
// /data/<layer>/<i>, diffs under /diff with snapshot_diff, and the state's
// iter, current_step, learned_net and history.
func TestHDF5SnapshotLayout(t *testing.T) {
	dir := t.TempDir()
	s := newSolver(t, `type: "Adam" base_lr: 0.05 lr_policy: "multistep" stepvalue: 1 gamma: 0.5 snapshot_format: HDF5 snapshot_diff: true snapshot_prefix: "`+filepath.Join(dir, "ls")+`"`)
	if err := s.Step(2); err != nil {
		t.Fatal(err)
	}
	model, state, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	w := s.Net().LayerByName("innerprod").LayerBase().Blobs()
	out := h5pytest.Run(t, dir, `
import h5py, numpy as np
m = h5py.File('ls_iter_2.caffemodel.h5', 'r')
assert sorted(m.keys()) == ['data', 'diff'], list(m.keys())
assert sorted(m['data'].keys()) == ['data', 'innerprod', 'loss'], list(m['data'].keys())
assert len(m['data/data']) == 0 and len(m['data/loss']) == 0
w, b = m['data/innerprod/0'], m['data/innerprod/1']
assert w.dtype == np.float64 and w.shape == (1, 3) and b.shape == (1,), (w.dtype, w.shape, b.shape)
assert m['diff/innerprod/0'].shape == (1, 3)
s = h5py.File('ls_iter_2.solverstate.h5', 'r')
assert s['iter'][()].tolist() == [2] and s['iter'].dtype == np.int32
assert s['current_step'][()].tolist() == [1]
assert s['learned_net'][()].decode().endswith('ls_iter_2.caffemodel.h5')
assert sorted(s['history'].keys()) == ['0', '1', '2', '3']
print(repr(float(w[0, 0])))
`)
	if got := strings.TrimSpace(out); got != strconv.FormatFloat(w[0].CPUData()[0], 'g', -1, 64) && got != fmt.Sprint(w[0].CPUData()[0]) {
		t.Errorf("h5py reads weight %s, the net has %v", got, w[0].CPUData()[0])
	}
	if !strings.HasSuffix(model, "ls_iter_2.caffemodel.h5") || !strings.HasSuffix(state, "ls_iter_2.solverstate.h5") {
		t.Errorf("snapshot files %s, %s", model, state)
	}
	// A state whose history does not fit this net is refused, naming file
	// and dataset, and leaves the solver as it was.
	other := newSolver(t, `type: "SGD" base_lr: 0.05 lr_policy: "fixed"`)
	if err := other.Restore(state); err == nil || !strings.Contains(err.Error(), "incorrect length of history") {
		t.Errorf("restoring Adam history into SGD: %v", err)
	}
	h5pytest.Run(t, dir, `
import h5py, numpy as np
with h5py.File('bad.solverstate.h5', 'w') as f:
    f['iter'] = np.array([7], np.int32)
    f['current_step'] = np.array([0], np.int32)
    h = f.create_group('history')
    h['0'] = np.zeros((3, 1))
    h['1'] = np.zeros(1)
`)
	if err := other.Restore(filepath.Join(dir, "bad.solverstate.h5")); err == nil || !strings.Contains(err.Error(), "bad.solverstate.h5: dataset /history/0") || !strings.Contains(err.Error(), "shape mismatch") {
		t.Errorf("wrong history shape: %v", err)
	}
	if other.Iter() != 0 {
		t.Errorf("a refused state moved the solver to iteration %d", other.Iter())
	}
}

func TestSolveSnapshotsAndStops(t *testing.T) {
	dir := t.TempDir()
	s := newSolver(t, `base_lr: 0.05 lr_policy: "fixed" max_iter: 5 snapshot: 2 snapshot_after_train: true snapshot_prefix: "`+filepath.Join(dir, "run")+`"`)
	if err := s.Solve(""); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"run_iter_2.caffemodel", "run_iter_2.solverstate", "run_iter_4.caffemodel", "run_iter_5.caffemodel", "run_iter_5.solverstate"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing snapshot %s", f)
		}
	}
	// A requested stop ends training after snapshotting.
	stopping := newSolver(t, `base_lr: 0.05 lr_policy: "fixed" max_iter: 100 snapshot_after_train: true snapshot_prefix: "`+filepath.Join(dir, "stop")+`"`)
	calls := 0
	stopping.SetActionFunc(func() solver.Action {
		if calls++; calls == 3 {
			return solver.Stop
		}
		return solver.None
	})
	if err := stopping.Solve(""); err != nil {
		t.Fatal(err)
	}
	if stopping.Iter() != 3 {
		t.Errorf("stopped at iteration %d, want 3", stopping.Iter())
	}
	if _, err := os.Stat(filepath.Join(dir, "stop_iter_3.caffemodel")); err != nil {
		t.Error("no snapshot after a requested stop")
	}
}

// A diverging run stops with an error naming the iteration and writes no
// snapshot.
func TestNaNLossStops(t *testing.T) {
	dir := t.TempDir()
	s := newSolver(t, `base_lr: 1e30 lr_policy: "fixed" max_iter: 50 snapshot_after_train: true snapshot_prefix: "`+filepath.Join(dir, "nan")+`"`)
	err := s.Solve("")
	if err == nil || !strings.Contains(err.Error(), "loss is") || !strings.Contains(err.Error(), "iteration") {
		t.Fatalf("err = %v, want a NaN/Inf loss error naming the iteration", err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "nan_iter_*")); len(files) != 0 {
		t.Errorf("a diverged run wrote snapshots: %v", files)
	}
}

func TestBadSolverParameters(t *testing.T) {
	cases := []struct{ extra, want string }{
		{`type: "AdaGrad" base_lr: 0.1 lr_policy: "fixed" momentum: 0.9`, "momentum cannot be used with AdaGrad"},
		{`type: "Adamax" base_lr: 0.1 lr_policy: "fixed"`, `unknown solver type "Adamax"`},
		{`base_lr: 0.1 lr_policy: "cosine"`, `unknown learning rate policy "cosine"`},
		{`base_lr: 0.1 lr_policy: "step"`, "needs a positive stepsize"},
		{`base_lr: 0.1 lr_policy: "fixed" regularization_type: "L3"`, `unknown regularization type "L3"`},
		{`base_lr: 0.1 lr_policy: "fixed" snapshot: 10 snapshot_prefix: "/nonexistent/dir/x"`, "cannot write to snapshot prefix"},
		{`base_lr: 0.1 lr_policy: "fixed" test_iter: 5`, "test nets need a positive test_interval"},
	}
	for _, c := range cases {
		p := &caffepb.SolverParameter{}
		if err := protoio.ParseText([]byte(leastSquaresNet+c.extra+" snapshot_after_train: false"), p); err != nil {
			t.Fatal(err)
		}
		if _, err := solver.New[float32](p, solver.Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.extra, err, c.want)
		}
	}
	if _, err := solver.NewFromFile[float32](filepath.Join(t.TempDir(), "missing_solver.prototxt"), solver.Options{}); err == nil ||
		!strings.Contains(err.Error(), "missing_solver.prototxt") {
		t.Errorf("missing solver file: err = %v", err)
	}
}

// Counts Caffe's loops take for granted are checked when the solver is
// made, and a restored iteration and step when they are read.
func TestSolverCountsAndStateChecked(t *testing.T) {
	for extra, want := range map[string]string{
		"test_iter: 0 test_interval: 10":  "test_iter must be at least 1: test net #0 has test_iter 0",
		"test_iter: -3 test_interval: 10": "test_iter must be at least 1",
		"max_iter: -1":                    "max_iter must not be negative",
		"test_interval: -2":               "test_interval must not be negative",
		"snapshot: -1":                    "snapshot must not be negative",
	} {
		p := &caffepb.SolverParameter{}
		if err := protoio.ParseText([]byte(leastSquaresNet+extra+` base_lr: 0.1 lr_policy: "fixed"`), p); err != nil {
			t.Fatal(err)
		}
		if _, err := solver.New[float64](p, solver.Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", extra, err, want)
		}
	}
	dir := t.TempDir()
	for _, c := range []struct {
		iter, step int32
		want       string
	}{{-10, 0, "iter -10 is negative"}, {10, -1, "current_step -1 is outside 0..2"}, {10, 3, "current_step 3 is outside 0..2"}} {
		s := newSolver(t, `base_lr: 0.1 lr_policy: "multistep" stepvalue: 5 stepvalue: 20 gamma: 0.5 snapshot_prefix: "`+dir+`/s"`)
		_, state, err := s.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		st := &caffepb.SolverState{}
		if err := protoio.ReadProtoFromBinaryFile(state, st); err != nil {
			t.Fatal(err)
		}
		st.Iter, st.CurrentStep = &c.iter, &c.step
		if err := protoio.WriteProtoToBinaryFile(st, state); err != nil {
			t.Fatal(err)
		}
		if err := s.Restore(state); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("iter %d step %d: err = %v, want %q", c.iter, c.step, err, c.want)
		}
	}
}
