package solver

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Rule is a solver type's update rule: what Caffe's solver subclasses
// compute in ComputeUpdateValue. Each iteration, after the gradients are
// computed, clipped (clip_gradients), normalised (iter_size) and
// regularised (weight_decay), the solver calls Update once per learnable
// parameter, in order; Net.Update then subtracts each diff from its data.
//
// A rule runs on the device context it was made for, which is the
// solver's; reading and writing the blobs through their CPU accessors
// works on any device (the data moves), and a rule that should stay on a
// GPU uses device.NewGPUView (the built-in rules are written once for both
// devices against a device.View). An iteration should allocate nothing.
type Rule[T blob.Float] interface {
	// Histories is how many history blobs the rule keeps per parameter
	// (SGD's momentum is one, Adam's two moments are two). The solver
	// makes them, zeroed and shaped like the parameters, and saves them in
	// snapshots as Caffe does: first every parameter's history 0, then
	// every parameter's history 1, and so on.
	Histories() int
	// Update turns u.Param's gradient, in its diff, into the update, left
	// in its diff.
	Update(u *ParamUpdate[T]) error
}

// ParamUpdate is one learnable parameter at one iteration, as a Rule sees
// it. The solver reuses it from parameter to parameter: a rule must not
// keep it, nor the History slice, beyond Update.
type ParamUpdate[T blob.Float] struct {
	// Index is the parameter's index among the net's learnable
	// parameters (Graph.LearnableParam).
	Index int
	// Param is the parameter: its data are the weights, its diff the
	// gradient, to be replaced by the update.
	Param *blob.Blob[T]
	// Rate is the parameter's learning rate: the policy's rate for the
	// iteration times the parameter's lr_mult.
	Rate T
	// Iter is the iteration being computed, 0 for the first update.
	Iter int
	// History holds the rule's Histories() blobs of this parameter,
	// shaped like it, kept from iteration to iteration and in snapshots.
	History []*blob.Blob[T]
	// Scratch holds two blobs shaped like the parameter that the rule may
	// overwrite (Caffe's update_ and temp_); nothing is kept in them.
	Scratch [2]*blob.Blob[T]
}

// RuleConstructor makes the rule of a solver type for a solver parameter
// on a device context (nil: the host). It reads and checks the
// hyperparameters the rule uses: an error here (momentum with AdaGrad, a
// rms_decay outside [0, 1)) fails solver.New.
type RuleConstructor[T blob.Float] func(p *caffepb.SolverParameter, ctx *device.Context) (Rule[T], error)

type ruleConstructors struct {
	f32 RuleConstructor[float32]
	f64 RuleConstructor[float64]
}

// rules is the registry of solver types.
var rules = registry[ruleConstructors]{what: "type", m: map[string]ruleConstructors{}}

// registry maps names to what they register (a type's rule, a policy).
type registry[V any] struct {
	mu   sync.RWMutex
	what string // for errors: "type", "learning rate policy"
	m    map[string]V
}

// add registers v under name; a name registered twice is an error.
func (r *registry[V]) add(name string, v V) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		return fmt.Errorf("solver: %s %q is already registered", r.what, name)
	}
	r.m[name] = v
	return nil
}

func (r *registry[V]) get(name string) (V, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.m[name]
	return v, ok
}

// names returns the registered names, sorted.
func (r *registry[V]) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.m))
}

// Register makes a solver type available under typ, the string of
// SolverParameter.type, so that a solver prototxt's `type: "MyRule"`
// builds it. The built-in types (SGD, Nesterov, AdaGrad, RMSProp,
// AdaDelta, Adam) are registered the same way. Users register their own,
// typically in an init function; registering a type twice is an error.
func Register(typ string, f32 RuleConstructor[float32], f64 RuleConstructor[float64]) error {
	if typ == "" || f32 == nil || f64 == nil {
		return fmt.Errorf("solver: Register(%q) needs a type name and both constructors", typ)
	}
	return rules.add(typ, ruleConstructors{f32, f64})
}

// register is Register for the built-in types, whose names cannot clash.
func register(typ string, f32 RuleConstructor[float32], f64 RuleConstructor[float64]) {
	if err := Register(typ, f32, f64); err != nil {
		panic(err)
	}
}

// Types returns the registered solver types, sorted.
func Types() []string { return rules.names() }

// newRule makes the rule of solver type typ for T.
func newRule[T blob.Float](typ string, p *caffepb.SolverParameter, ctx *device.Context) (Rule[T], error) {
	c, ok := rules.get(typ)
	if !ok {
		return nil, fmt.Errorf("unknown solver type %q (known: %v)", typ, Types())
	}
	var r any
	var err error
	var zero T
	switch any(zero).(type) {
	case float32:
		r, err = c.f32(p, ctx)
	case float64:
		r, err = c.f64(p, ctx)
	}
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("solver type %q: the constructor returned no rule", typ)
	}
	return r.(Rule[T]), nil
}
