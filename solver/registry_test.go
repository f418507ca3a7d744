package solver_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/logtest"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/solver"
)

// heavyBall is a user's own solver type, SGD with momentum written on the
// host with the blobs' CPU accessors: h = momentum*h + rate*g, update = h.
type heavyBall[T blob.Float] struct{ momentum T }

func newHeavyBall[T blob.Float](p *caffepb.SolverParameter, _ *device.Context) (solver.Rule[T], error) {
	if p.GetMomentum() <= 0 {
		return nil, errors.New("HeavyBall needs a momentum")
	}
	return heavyBall[T]{T(p.GetMomentum())}, nil
}

func (heavyBall[T]) Histories() int { return 1 }

func (r heavyBall[T]) Update(u *solver.ParamUpdate[T]) error {
	h, g := u.History[0].MutableCPUData(), u.Param.MutableCPUDiff()
	for i := range g {
		h[i] = r.momentum*h[i] + u.Rate*g[i]
		g[i] = h[i]
	}
	return nil
}

func init() {
	if err := solver.Register("HeavyBall", newHeavyBall[float32], newHeavyBall[float64]); err != nil {
		panic(err)
	}
	halving := solver.Policy{
		Check: func(p *caffepb.SolverParameter) error {
			if p.GetStepsize() <= 0 {
				return errors.New("halving needs a stepsize")
			}
			return nil
		},
		Rate: func(p *caffepb.SolverParameter, iter int, step *int) float64 {
			*step = iter / int(p.GetStepsize())
			return float64(p.GetBaseLr()) / float64(int(1)<<*step)
		},
	}
	if err := solver.RegisterPolicy("halving", halving); err != nil {
		panic(err)
	}
}

// A registered type is a solver prototxt's type like the built-in ones:
// HeavyBall trains as SGD with momentum does, its history in snapshots.
func TestRegisteredType(t *testing.T) {
	r := rule{typ: "SGD", lr: 0.1, momentum: 0.9}.asStored()
	checkUpdates(t, newSolver(t, `type: "HeavyBall" base_lr: 0.1 lr_policy: "fixed" momentum: 0.9`), &r, 5)

	if !slices.Contains(solver.Types(), "HeavyBall") || !slices.Contains(solver.Types(), "Adam") {
		t.Errorf("Types() = %v, want the built-in types and HeavyBall", solver.Types())
	}
	for _, c := range []struct{ extra, want string }{
		{`type: "HeavyBall" base_lr: 0.1 lr_policy: "fixed"`, "HeavyBall needs a momentum"},
		{`type: "Lion" base_lr: 0.1 lr_policy: "fixed"`, `unknown solver type "Lion" (known: [AdaDelta AdaGrad Adam HeavyBall Nesterov RMSProp SGD`},
	} {
		if _, err := solver.New[float32](solverParam(t, c.extra+" snapshot_after_train: false"), solver.Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.extra, err, c.want)
		}
	}
}

func TestRegisteredTypeSnapshot(t *testing.T) { snapshotRestore(t, "BINARYPROTO", "HeavyBall") }

func TestRegisterRefuses(t *testing.T) {
	f32, f64 := newHeavyBall[float32], newHeavyBall[float64]
	for _, c := range []struct {
		typ  string
		f32  solver.RuleConstructor[float32]
		want string
	}{
		{"SGD", f32, `type "SGD" is already registered`},
		{"", f32, "needs a type name"},
		{"X", nil, "both constructors"},
	} {
		if err := solver.Register(c.typ, c.f32, f64); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Register(%q): err = %v, want %q", c.typ, err, c.want)
		}
	}
	if err := solver.RegisterPolicy("step", solver.Policy{Rate: func(*caffepb.SolverParameter, int, *int) float64 { return 0 }}); err == nil {
		t.Error("registering the policy step again succeeded")
	}
}

// A registered policy is an lr_policy like Caffe's, its step saved in
// snapshots as current_step.
func TestRegisteredPolicy(t *testing.T) {
	var log logtest.Recorder
	p := solverParam(t, `base_lr: 0.4 lr_policy: "halving" stepsize: 2 snapshot_after_train: false`)
	p.Display = proto.Int32(1)
	s, err := solver.New[float64](p, solver.Options{Logger: log.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Step(5); err != nil {
		t.Fatal(err)
	}
	for it, rate := range []string{"0.4", "0.4", "0.2", "0.2", "0.1"} {
		if want := fmt.Sprintf("Iteration %d, lr = %s", it, rate); !slices.ContainsFunc(log.Lines(), func(l logtest.Line) bool { return l.Message == want }) {
			t.Errorf("no line %q", want)
		}
	}
	if !slices.Contains(solver.Policies(), "halving") {
		t.Errorf("Policies() = %v", solver.Policies())
	}
	if _, err := solver.New[float32](solverParam(t, `base_lr: 0.1 lr_policy: "halving" snapshot_after_train: false`), solver.Options{}); err == nil || !strings.Contains(err.Error(), "halving needs a stepsize") {
		t.Errorf("halving without stepsize: err = %v", err)
	}
}

// A hook that halves every gradient trains exactly as half the learning
// rate does (without weight decay, which the update adds after the hooks).
func TestOnGradientsReadyScales(t *testing.T) {
	const extra = ` lr_policy: "fixed" momentum: 0.9 iter_size: 2`
	halved := newSolver(t, `base_lr: 0.2`+extra)
	calls := 0
	halved.OnGradientsReady(func(s *solver.Solver[float64]) error {
		calls++
		for _, p := range s.Net().LearnableParams() {
			p.ScaleDiff(0.5)
		}
		return nil
	})
	half := newSolver(t, `base_lr: 0.1`+extra)
	for _, s := range []*solver.Solver[float64]{halved, half} {
		if err := s.Step(4); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 4 {
		t.Errorf("the hook ran %d times in 4 iterations of iter_size 2, want 4", calls)
	}
	for i, p := range half.Net().LearnableParams() {
		got := halved.Net().LearnableParams()[i].CPUData()
		if !slices.Equal(got, p.CPUData()) {
			t.Errorf("param %d: %v with halved gradients, %v with half the rate", i, got, p.CPUData())
		}
	}
}

// Hooks run in order, see the iteration's summed gradients before the
// update, and an error stops training naming the iteration.
func TestOnGradientsReadyOrderAndErrors(t *testing.T) {
	s := newSolver(t, `base_lr: 0.1 lr_policy: "fixed"`)
	var order []string
	s.OnGradientsReady(func(s *solver.Solver[float64]) error {
		order = append(order, "first")
		if g := s.Net().LearnableParams()[0].AsumDiff(); g == 0 || math.IsNaN(g) {
			t.Errorf("iteration %d: the hook sees gradient sum %v", s.Iter(), g)
		}
		return nil
	})
	s.OnGradientsReady(func(s *solver.Solver[float64]) error {
		order = append(order, "second")
		if s.Iter() == 2 {
			return errors.New("enough")
		}
		return nil
	})
	err := s.Step(5)
	if err == nil || err.Error() != "iteration 2: enough" {
		t.Errorf("err = %v, want iteration 2: enough", err)
	}
	if want := []string{"first", "second", "first", "second", "first", "second"}; !slices.Equal(order, want) {
		t.Errorf("hooks ran %v, want %v", order, want)
	}
	if s.Iter() != 2 {
		t.Errorf("stopped at iteration %d, want 2 (no update after the error)", s.Iter())
	}
}

// An iteration with a hook allocates nothing.
func TestOnGradientsReadyAllocatesNothing(t *testing.T) {
	s := newSolver(t, `base_lr: 0.01 lr_policy: "fixed" momentum: 0.9`)
	s.OnGradientsReady(func(s *solver.Solver[float64]) error {
		for p := range s.Net().Graph().LearnableParams() {
			p.Blob().ScaleDiff(0.5)
		}
		return nil
	})
	if err := s.Step(2); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(20, func() { s.Step(1) }); n != 0 {
		t.Errorf("an iteration allocates %v times, want 0", n)
	}
}

// OnStart hooks run at the start of each iteration, before its passes
// (they see the gradients cleared, the iteration not yet counted), and an
// error from one stops training naming the iteration, before its update.
func TestOnStart(t *testing.T) {
	s := newSolver(t, `base_lr: 0.1 lr_policy: "fixed"`)
	var seen []int
	s.OnStart(func(s *solver.Solver[float64]) error {
		seen = append(seen, s.Iter())
		if s.Iter() == 3 {
			return errors.New("stop here")
		}
		return nil
	})
	err := s.Step(5)
	if err == nil || err.Error() != "iteration 3: stop here" {
		t.Errorf("err = %v, want iteration 3: stop here", err)
	}
	if !slices.Equal(seen, []int{0, 1, 2, 3}) || s.Iter() != 3 {
		t.Errorf("hook saw iterations %v, solver at %d; want 0..3 and 3", seen, s.Iter())
	}
}

// ApplyUpdate is an iteration's update alone: after a forward-backward
// pass of the train net it leaves the weights a Step of one iteration
// leaves, and the iteration count where it was.
func TestApplyUpdate(t *testing.T) {
	const param = `base_lr: 0.1 lr_policy: "fixed" momentum: 0.9 weight_decay: 0.01`
	stepped, applied := newSolver(t, param), newSolver(t, param)
	if err := stepped.Step(1); err != nil {
		t.Fatal(err)
	}
	n := applied.Net()
	if err := n.ClearParamDiffs(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.ForwardBackward(); err != nil {
		t.Fatal(err)
	}
	if err := applied.ApplyUpdate(); err != nil {
		t.Fatal(err)
	}
	if applied.Iter() != 0 {
		t.Errorf("ApplyUpdate moved the iteration to %d", applied.Iter())
	}
	for i, p := range stepped.Net().LearnableParams() {
		if got := n.LearnableParams()[i].CPUData(); !slices.Equal(got, p.CPUData()) {
			t.Errorf("param %d: %v after ApplyUpdate, %v after Step(1)", i, got, p.CPUData())
		}
	}
}
