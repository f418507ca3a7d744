package solver

import (
	"fmt"
	"math"
	"slices"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

var types = []string{"SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Adam"}

// Types returns the solver types, SolverParameter.type (a new slice each
// call).
func Types() []string { return slices.Clone(types) }

// legacyTypes maps the deprecated solver_type enum to type strings.
var legacyTypes = map[caffepb.SolverParameter_SolverType]string{
	caffepb.SolverParameter_SGD: "SGD", caffepb.SolverParameter_NESTEROV: "Nesterov",
	caffepb.SolverParameter_ADAGRAD: "AdaGrad", caffepb.SolverParameter_RMSPROP: "RMSProp",
	caffepb.SolverParameter_ADADELTA: "AdaDelta", caffepb.SolverParameter_ADAM: "Adam",
}

// solverType resolves the solver type, honouring the deprecated enum, and
// checks the parameters the type constrains.
func solverType(p *caffepb.SolverParameter) (string, error) {
	typ := p.GetType()
	if p.SolverType != nil && p.Type == nil {
		typ = legacyTypes[p.GetSolverType()]
	}
	switch typ {
	case "SGD", "Nesterov", "AdaDelta", "Adam":
	case "AdaGrad", "RMSProp":
		if p.GetMomentum() != 0 {
			return "", fmt.Errorf("momentum cannot be used with %s (momentum = %v)", typ, p.GetMomentum())
		}
		if typ == "RMSProp" && (p.GetRmsDecay() < 0 || p.GetRmsDecay() >= 1) {
			return "", fmt.Errorf("rms_decay should lie between 0 and 1, got %v", p.GetRmsDecay())
		}
	default:
		return "", fmt.Errorf("unknown solver type %q (known: %v)", typ, types)
	}
	switch p.GetRegularizationType() {
	case "L1", "L2":
	default:
		return "", fmt.Errorf("unknown regularization type %q (want L1 or L2)", p.GetRegularizationType())
	}
	return typ, nil
}

// updater applies the solver's update rule on the solver's device: made at
// New for its context, with the device's view, so that an iteration
// allocates nothing and decides nothing.
type updater[T blob.Float] interface {
	// histories is how many history blobs each parameter has.
	histories() int
	// apply is Caffe's ApplyUpdate after the learning rate is known: clip
	// the gradients, then for each parameter normalise (iter_size),
	// regularise (weight decay) and turn the gradient into the update,
	// left in the diff for Net.Update.
	apply(s *Solver[T], rate float64) error
}

// newUpdater makes the updater of the solver's type on its context.
func newUpdater[T blob.Float](s *Solver[T]) (updater[T], error) {
	if !s.ctx.OnGPU() {
		return &viewUpdater[T, []T]{v: device.HostView[T]{}, rule: ruleFor[T, []T](s.typ)}, nil
	}
	v, err := device.NewGPUView[T](s.ctx)
	if err != nil {
		return nil, err
	}
	return &viewUpdater[T, cuda.DevicePtr]{v: v, rule: ruleFor[T, cuda.DevicePtr](s.typ)}, nil
}

// rule is one solver type's update rule (Caffe's ComputeUpdateValue),
// written once for both devices against the view of a paramUpdate.
type rule[T blob.Float, A any] interface {
	// histories is how many history blobs each parameter has: AdaDelta
	// and Adam keep two (stored as two consecutive runs in the
	// .solverstate, as Caffe does).
	histories() int
	// update turns the gradient in u.diff into the update, left in u.diff.
	update(u *paramUpdate[T, A])
}

// paramUpdate is one learnable parameter's update, as a rule sees it.
type paramUpdate[T blob.Float, A any] struct {
	s    *Solver[T]
	v    device.View[T, A]
	id   int // the parameter's index in Net.LearnableParams
	n    int // its element count
	diff A   // its gradient, then its update
	rate T   // the local rate: the learning rate times the parameter's lr_mult
}

// history returns the parameter's history blob k (0, or 1 for the rules
// that keep two).
func (u *paramUpdate[T, A]) history(k int) *blob.Blob[T] {
	return u.s.history[u.id+k*len(u.s.net.LearnableParams())]
}

// viewUpdater is the updater of a device whose arrays are A.
type viewUpdater[T blob.Float, A any] struct {
	v    device.View[T, A]
	rule rule[T, A]
	u    paramUpdate[T, A] // reused for every parameter
}

func (up *viewUpdater[T, A]) histories() int { return up.rule.histories() }

func (up *viewUpdater[T, A]) apply(s *Solver[T], rate float64) error {
	v := up.v
	v.ResetErr()
	s.clipGradients()
	for id, p := range s.net.LearnableParams() {
		n := p.Count()
		if size := s.param.GetIterSize(); size > 1 {
			v.Scal(n, T(1/float64(size)), v.MutableDiff(p))
		}
		regularize(s, v, id, p)
		up.u = paramUpdate[T, A]{s: s, v: v, id: id, n: n, rate: T(rate * float64(s.net.ParamsLR()[id]))}
		up.u.diff = v.MutableDiff(p)
		up.rule.update(&up.u)
	}
	return v.Err()
}

// ruleFor returns the rule of solver type typ (one solverType accepts).
func ruleFor[T blob.Float, A any](typ string) rule[T, A] {
	switch typ {
	case "Nesterov":
		return nesterov[T, A]{}
	case "AdaGrad":
		return adaGrad[T, A]{}
	case "RMSProp":
		return rmsProp[T, A]{}
	case "AdaDelta":
		return adaDelta[T, A]{}
	case "Adam":
		return adam[T, A]{}
	}
	return sgd[T, A]{}
}

// sgd is stochastic gradient descent with momentum: h = momentum*h +
// local_rate*g, and the update is h.
type sgd[T blob.Float, A any] struct{}

func (sgd[T, A]) histories() int { return 1 }

func (sgd[T, A]) update(u *paramUpdate[T, A]) {
	v, h := u.v, u.history(0)
	v.Axpby(u.n, u.rate, u.diff, T(u.s.param.GetMomentum()), v.MutableData(h))
	v.Copy(u.n, v.Data(h), u.diff)
}

// regularize adds the weight decay gradient: L2 adds decay*w, L1
// decay*sign(w).
func regularize[T blob.Float, A any](s *Solver[T], v device.View[T, A], id int, p *blob.Blob[T]) {
	decay := T(s.param.GetWeightDecay() * s.net.ParamsWeightDecay()[id])
	if decay == 0 {
		return
	}
	n := p.Count()
	if s.param.GetRegularizationType() == "L2" {
		v.Axpy(n, decay, v.Data(p), v.MutableDiff(p))
		return
	}
	signs := v.MutableData(s.temp[id])
	v.Sign(n, v.Data(p), signs)
	v.Axpy(n, decay, signs, v.MutableDiff(p))
}

// nesterov is Nesterov's accelerated gradient: step back along the old
// momentum, then over-step along the new.
type nesterov[T blob.Float, A any] struct{}

func (nesterov[T, A]) histories() int { return 1 }

func (nesterov[T, A]) update(u *paramUpdate[T, A]) {
	v, n, diff, h := u.v, u.n, u.diff, u.history(0)
	momentum := T(u.s.param.GetMomentum())
	prev := v.MutableData(u.s.update[u.id])
	v.Copy(n, v.Data(h), prev)
	v.Axpby(n, u.rate, diff, momentum, v.MutableData(h))
	v.Axpby(n, 1+momentum, v.Data(h), -momentum, prev)
	v.Copy(n, prev, diff)
}

// adaGrad is AdaGrad: h += g^2; update = local_rate * g / (sqrt(h) + delta).
type adaGrad[T blob.Float, A any] struct{}

func (adaGrad[T, A]) histories() int { return 1 }

func (adaGrad[T, A]) update(u *paramUpdate[T, A]) {
	v, n, diff, h := u.v, u.n, u.diff, u.history(0)
	up := v.MutableData(u.s.update[u.id])
	v.Powx(n, diff, 2, up)
	v.Add(n, up, v.Data(h), v.MutableData(h))
	scaledByRMS(v, n, v.Data(h), T(u.s.param.GetDelta()), diff, up, u.rate)
}

// rmsProp is RMSProp: h = rms_decay*h + (1-rms_decay)*g^2; the update is
// AdaGrad's.
type rmsProp[T blob.Float, A any] struct{}

func (rmsProp[T, A]) histories() int { return 1 }

func (rmsProp[T, A]) update(u *paramUpdate[T, A]) {
	v, n, diff, h := u.v, u.n, u.diff, u.history(0)
	decay := T(u.s.param.GetRmsDecay())
	up := v.MutableData(u.s.update[u.id])
	v.Powx(n, diff, 2, up)
	v.Axpby(n, 1-decay, up, decay, v.MutableData(h))
	scaledByRMS(v, n, v.Data(h), T(u.s.param.GetDelta()), diff, up, u.rate)
}

// scaledByRMS sets diff = rate * g / (sqrt(h) + delta), using u as scratch.
func scaledByRMS[T blob.Float, A any](v device.View[T, A], n int, h A, delta T, diff, u A, rate T) {
	v.Powx(n, h, 0.5, u)
	v.AddScalar(n, delta, u)
	v.Div(n, diff, u, u)
	v.Axpby(n, rate, u, 0, diff)
}

// adaDelta is Zeiler's AdaDelta: h1 (gradients) and h2 (updates) are decayed
// averages of squares; the update is g * sqrt(h2 + delta) / sqrt(h1 + delta),
// then h2 takes the square of the update.
type adaDelta[T blob.Float, A any] struct{}

func (adaDelta[T, A]) histories() int { return 2 }

func (adaDelta[T, A]) update(u *paramUpdate[T, A]) {
	v, n, diff := u.v, u.n, u.diff
	momentum, delta := T(u.s.param.GetMomentum()), T(u.s.param.GetDelta())
	h1 := v.MutableData(u.history(0))
	h2 := v.MutableData(u.history(1))
	up, tmp := v.MutableData(u.s.update[u.id]), v.MutableData(u.s.temp[u.id])
	v.Powx(n, diff, 2, up)
	v.Axpby(n, 1-momentum, up, momentum, h1)
	v.Set(n, delta, tmp)
	v.Add(n, tmp, h2, up)
	v.Add(n, tmp, h1, tmp)
	v.Div(n, up, tmp, up)
	v.Powx(n, up, 0.5, up)
	v.Mul(n, diff, up, diff)
	v.Powx(n, diff, 2, up)
	v.Axpby(n, 1-momentum, up, momentum, h2)
	v.Scale(n, u.rate, diff, diff)
}

// adam is Kingma and Ba's Adam with Caffe's bias correction
// sqrt(1 - beta2^t) / (1 - beta1^t), t = iter + 1.
type adam[T blob.Float, A any] struct{}

func (adam[T, A]) histories() int { return 2 }

func (adam[T, A]) update(u *paramUpdate[T, A]) {
	v, n, diff, s := u.v, u.n, u.diff, u.s
	beta1, beta2 := float64(s.param.GetMomentum()), float64(s.param.GetMomentum2())
	t := float64(s.iter + 1)
	correction := math.Sqrt(1-math.Pow(beta2, t)) / (1 - math.Pow(beta1, t))
	m := v.MutableData(u.history(0))
	vv := v.MutableData(u.history(1))
	tmp := v.MutableData(s.temp[u.id])
	v.Axpby(n, T(1-beta1), diff, T(beta1), m)
	v.Mul(n, diff, diff, tmp)
	v.Axpby(n, T(1-beta2), tmp, T(beta2), vv)
	v.Powx(n, vv, 0.5, tmp)
	v.AddScalar(n, T(s.param.GetDelta()), tmp)
	v.Div(n, m, tmp, tmp)
	v.Scale(n, u.rate*T(correction), tmp, diff)
}
