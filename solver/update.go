package solver

import (
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// solverType resolves the solver type, honouring the deprecated enum.
func solverType(p *caffepb.SolverParameter) string { return netproto.SolverType(p) }

// checkRegularization checks regularization_type, which regularize reads.
func checkRegularization(p *caffepb.SolverParameter) error {
	if reg := p.GetRegularizationType(); reg != "L1" && reg != "L2" {
		return fmt.Errorf("unknown regularization type %q (want L1 or L2)", reg)
	}
	return nil
}

// updater prepares the gradients on the solver's device and hands each to
// the rule: made at New for its context, with the device's view, so that an
// iteration allocates nothing and decides nothing.
type updater[T blob.Float] interface {
	// apply is Caffe's ApplyUpdate after the learning rate is known and
	// Net::Update after it: clip the gradients, then for each parameter
	// normalise (iter_size), regularise (weight decay), let the rule turn
	// the gradient into the update, left in the diff, and subtract it
	// from the weights.
	apply(s *Solver[T], rate float64) error
	// close releases what the updater holds on the device.
	close() error
}

// newUpdater makes the updater of the solver's context: on a GPU with the
// built-in SGD rule, the fused one.
func newUpdater[T blob.Float](s *Solver[T]) (updater[T], error) {
	if !s.ctx.OnGPU() {
		return &viewUpdater[T, []T]{v: device.Host[T](s.ctx)}, nil
	}
	v, err := device.NewGPUView[T](s.ctx)
	if err != nil {
		return nil, err
	}
	if r, ok := s.rule.(*viewRule[T, cuda.DevicePtr]); ok && fusedUpdates(s.ctx) {
		if _, ok := r.r.(sgd[T, cuda.DevicePtr]); ok {
			return &fusedSGD[T]{v: v}, nil
		}
	}
	return &viewUpdater[T, cuda.DevicePtr]{v: v}, nil
}

// viewUpdater is the updater of a device whose arrays are A.
type viewUpdater[T blob.Float, A any] struct {
	v device.View[T, A]
	u ParamUpdate[T] // reused for every parameter
}

func (up *viewUpdater[T, A]) apply(s *Solver[T], rate float64) error {
	v := up.v
	v.ResetErr()
	s.clipGradients()
	for param := range s.net.Graph().LearnableParams() {
		id, p := param.Learnable(), param.Blob()
		if size := s.param.GetIterSize(); size > 1 {
			v.Scal(p.Count(), T(1/float64(size)), v.MutableDiff(p))
		}
		regularize(s, v, id, p, param.DecayMult())
		up.u = ParamUpdate[T]{
			Index: id, Param: p, Rate: T(rate * float64(param.LRMult())), Iter: s.iter,
			History: s.paramHistory[id], Scratch: [2]*blob.Blob[T]{s.update[id], s.temp[id]},
		}
		if err := s.rule.Update(&up.u); err != nil {
			return fmt.Errorf("%s update of learnable parameter %d: %w", s.typ, id, err)
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	return s.net.Update()
}

func (up *viewUpdater[T, A]) close() error { return nil }

// regularize adds the weight decay gradient: L2 adds decay*w, L1
// decay*sign(w).
func regularize[T blob.Float, A any](s *Solver[T], v device.View[T, A], id int, p *blob.Blob[T], decayMult float32) {
	decay := T(s.param.GetWeightDecay() * decayMult)
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

// The built-in rules are written once for both devices against a
// device.View, as arrayRules, and registered as Rules through viewRule.
func init() {
	register("SGD", newSGD[float32], newSGD[float64])
	register("Nesterov", newNesterov[float32], newNesterov[float64])
	register("AdaGrad", newAdaGrad[float32], newAdaGrad[float64])
	register("RMSProp", newRMSProp[float32], newRMSProp[float64])
	register("AdaDelta", newAdaDelta[float32], newAdaDelta[float64])
	register("Adam", newAdam[float32], newAdam[float64])
}

// arrayRule is an update rule written against a device's View, whose
// arrays are A.
type arrayRule[T blob.Float, A any] interface {
	histories() int
	// update turns the gradient in u.Param's diff into the update.
	update(v device.View[T, A], u *ParamUpdate[T])
}

// viewRule is the Rule of an arrayRule on a device, with the device's View.
type viewRule[T blob.Float, A any] struct {
	v device.View[T, A]
	r arrayRule[T, A]
}

func (r *viewRule[T, A]) Histories() int { return r.r.histories() }

func (r *viewRule[T, A]) Update(u *ParamUpdate[T]) error {
	r.v.ResetErr()
	r.r.update(r.v, u)
	return r.v.Err()
}

// onDevice returns the Rule of host on the host and of gpu on a GPU
// context.
func onDevice[T blob.Float](ctx *device.Context, host arrayRule[T, []T], gpu arrayRule[T, cuda.DevicePtr]) (Rule[T], error) {
	if !ctx.OnGPU() {
		return &viewRule[T, []T]{v: device.Host[T](ctx), r: host}, nil
	}
	v, err := device.NewGPUView[T](ctx)
	if err != nil {
		return nil, err
	}
	return &viewRule[T, cuda.DevicePtr]{v: v, r: gpu}, nil
}

// noMomentum refuses a momentum for the types that have none (Caffe's
// AdaGrad and RMSProp constructors).
func noMomentum(typ string, p *caffepb.SolverParameter) error {
	if p.GetMomentum() != 0 {
		return fmt.Errorf("momentum cannot be used with %s (momentum = %v)", typ, p.GetMomentum())
	}
	return nil
}

func newSGD[T blob.Float](p *caffepb.SolverParameter, ctx *device.Context) (Rule[T], error) {
	return onDevice[T](ctx, sgd[T, []T]{p}, sgd[T, cuda.DevicePtr]{p})
}

func newNesterov[T blob.Float](p *caffepb.SolverParameter, ctx *device.Context) (Rule[T], error) {
	return onDevice[T](ctx, nesterov[T, []T]{p}, nesterov[T, cuda.DevicePtr]{p})
}

func newAdaGrad[T blob.Float](p *caffepb.SolverParameter, ctx *device.Context) (Rule[T], error) {
	if err := noMomentum("AdaGrad", p); err != nil {
		return nil, err
	}
	return onDevice[T](ctx, adaGrad[T, []T]{p}, adaGrad[T, cuda.DevicePtr]{p})
}

func newRMSProp[T blob.Float](p *caffepb.SolverParameter, ctx *device.Context) (Rule[T], error) {
	if err := noMomentum("RMSProp", p); err != nil {
		return nil, err
	}
	if p.GetRmsDecay() < 0 || p.GetRmsDecay() >= 1 {
		return nil, fmt.Errorf("rms_decay should lie between 0 and 1, got %v", p.GetRmsDecay())
	}
	return onDevice[T](ctx, rmsProp[T, []T]{p}, rmsProp[T, cuda.DevicePtr]{p})
}

func newAdaDelta[T blob.Float](p *caffepb.SolverParameter, ctx *device.Context) (Rule[T], error) {
	return onDevice[T](ctx, adaDelta[T, []T]{p}, adaDelta[T, cuda.DevicePtr]{p})
}

func newAdam[T blob.Float](p *caffepb.SolverParameter, ctx *device.Context) (Rule[T], error) {
	return onDevice[T](ctx, adam[T, []T]{p}, adam[T, cuda.DevicePtr]{p})
}

// sgd is stochastic gradient descent with momentum: h = momentum*h +
// local_rate*g, and the update is h.
type sgd[T blob.Float, A any] struct{ p *caffepb.SolverParameter }

func (sgd[T, A]) histories() int { return 1 }

func (r sgd[T, A]) update(v device.View[T, A], u *ParamUpdate[T]) {
	n, diff, h := u.Param.Count(), v.MutableDiff(u.Param), u.History[0]
	v.Axpby(n, u.Rate, diff, T(r.p.GetMomentum()), v.MutableData(h))
	v.Copy(n, v.Data(h), diff)
}

// nesterov is Nesterov's accelerated gradient: step back along the old
// momentum, then over-step along the new.
type nesterov[T blob.Float, A any] struct{ p *caffepb.SolverParameter }

func (nesterov[T, A]) histories() int { return 1 }

func (r nesterov[T, A]) update(v device.View[T, A], u *ParamUpdate[T]) {
	n, diff, h := u.Param.Count(), v.MutableDiff(u.Param), u.History[0]
	momentum := T(r.p.GetMomentum())
	prev := v.MutableData(u.Scratch[0])
	v.Copy(n, v.Data(h), prev)
	v.Axpby(n, u.Rate, diff, momentum, v.MutableData(h))
	v.Axpby(n, 1+momentum, v.Data(h), -momentum, prev)
	v.Copy(n, prev, diff)
}

// adaGrad is AdaGrad: h += g^2; update = local_rate * g / (sqrt(h) + delta).
type adaGrad[T blob.Float, A any] struct{ p *caffepb.SolverParameter }

func (adaGrad[T, A]) histories() int { return 1 }

func (r adaGrad[T, A]) update(v device.View[T, A], u *ParamUpdate[T]) {
	n, diff, h := u.Param.Count(), v.MutableDiff(u.Param), u.History[0]
	up := v.MutableData(u.Scratch[0])
	v.Powx(n, diff, 2, up)
	v.Add(n, up, v.Data(h), v.MutableData(h))
	scaledByRMS(v, n, v.Data(h), T(r.p.GetDelta()), diff, up, u.Rate)
}

// rmsProp is RMSProp: h = rms_decay*h + (1-rms_decay)*g^2; the update is
// AdaGrad's.
type rmsProp[T blob.Float, A any] struct{ p *caffepb.SolverParameter }

func (rmsProp[T, A]) histories() int { return 1 }

func (r rmsProp[T, A]) update(v device.View[T, A], u *ParamUpdate[T]) {
	n, diff, h := u.Param.Count(), v.MutableDiff(u.Param), u.History[0]
	decay := T(r.p.GetRmsDecay())
	up := v.MutableData(u.Scratch[0])
	v.Powx(n, diff, 2, up)
	v.Axpby(n, 1-decay, up, decay, v.MutableData(h))
	scaledByRMS(v, n, v.Data(h), T(r.p.GetDelta()), diff, up, u.Rate)
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
type adaDelta[T blob.Float, A any] struct{ p *caffepb.SolverParameter }

func (adaDelta[T, A]) histories() int { return 2 }

func (r adaDelta[T, A]) update(v device.View[T, A], u *ParamUpdate[T]) {
	n, diff := u.Param.Count(), v.MutableDiff(u.Param)
	momentum, delta := T(r.p.GetMomentum()), T(r.p.GetDelta())
	h1 := v.MutableData(u.History[0])
	h2 := v.MutableData(u.History[1])
	up, tmp := v.MutableData(u.Scratch[0]), v.MutableData(u.Scratch[1])
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
	v.Scale(n, u.Rate, diff, diff)
}

// adam is Kingma and Ba's Adam with Caffe's bias correction
// sqrt(1 - beta2^t) / (1 - beta1^t), t = iter + 1.
type adam[T blob.Float, A any] struct{ p *caffepb.SolverParameter }

func (adam[T, A]) histories() int { return 2 }

func (r adam[T, A]) update(v device.View[T, A], u *ParamUpdate[T]) {
	n, diff := u.Param.Count(), v.MutableDiff(u.Param)
	beta1, beta2 := float64(r.p.GetMomentum()), float64(r.p.GetMomentum2())
	t := float64(u.Iter + 1)
	correction := math.Sqrt(1-math.Pow(beta2, t)) / (1 - math.Pow(beta1, t))
	m := v.MutableData(u.History[0])
	vv := v.MutableData(u.History[1])
	tmp := v.MutableData(u.Scratch[1])
	v.Axpby(n, T(1-beta1), diff, T(beta1), m)
	v.Mul(n, diff, diff, tmp)
	v.Axpby(n, T(1-beta2), tmp, T(beta2), vv)
	v.Powx(n, vv, 0.5, tmp)
	v.AddScalar(n, T(r.p.GetDelta()), tmp)
	v.Div(n, m, tmp, tmp)
	v.Scale(n, u.Rate*T(correction), tmp, diff)
}
