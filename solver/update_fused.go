package solver

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/settings"
)

// fusedUpdates says whether the GPU solver of ctx may update all
// parameters in one launch: on unless its FusedUpdate setting is off
// (GOCAFFE_FUSED_UPDATE=off), for comparing with the
// operation-by-operation path, whose results are the same.
func fusedUpdates(ctx *device.Context) bool { return ctx.Settings().FusedUpdate != settings.Off }

// fusedSGD is the GPU updater of the built-in SGD rule: the whole of
// ApplyUpdate and Net::Update in one kernel launch (mathfn's SGDStep)
// rather than about six per parameter (weight decay, axpby's scal and
// axpy, the copy, the update's axpy, each a cgo call of a few
// microseconds: ResNet-50's 320 parameter blobs spent about 6 ms of host
// time an iteration on them, during which the device waited).
type fusedSGD[T blob.Float] struct {
	v      *device.GPUView[T]
	plan   *mathfn.SGDPlan
	params []mathfn.SGDParam // this iteration's, compared with the plan's
}

// collect lists this iteration's parameters in f.params.
func (f *fusedSGD[T]) collect(s *Solver[T]) error {
	f.params = f.params[:0]
	v, decay := f.v, s.param.GetWeightDecay()
	v.ResetErr()
	for param := range s.net.Graph().LearnableParams() {
		id, p := param.Learnable(), param.Blob()
		d := float64(T(decay * param.DecayMult()))
		f.params = append(f.params, mathfn.SGDParam{
			Data: v.MutableData(p), Diff: v.MutableDiff(p), History: v.MutableData(s.paramHistory[id][0]),
			N: p.Count(), LRMult: float64(param.LRMult()), Decay: d,
		})
	}
	return v.Err()
}

// clearDiffs zeroes every parameter's gradient in one launch once a plan
// for the parameters exists (after the first update), and reports whether
// it did; the net's ClearParamDiffs does it otherwise.
func (f *fusedSGD[T]) clearDiffs(s *Solver[T]) (bool, error) {
	if f.plan == nil {
		return false, nil
	}
	if err := f.collect(s); err != nil {
		return false, err
	}
	if !f.plan.Matches(f.params) {
		return false, nil
	}
	f.v.ZeroDiffs(f.plan)
	return true, f.v.Err()
}

func (f *fusedSGD[T]) apply(s *Solver[T], rate float64) error {
	s.clipGradients()
	if err := f.collect(s); err != nil {
		return err
	}
	v := f.v
	if f.plan == nil || !f.plan.Matches(f.params) {
		if err := f.close(); err != nil {
			return err
		}
		plan, err := mathfn.NewSGDPlan(f.v.Device(), f.params)
		if err != nil {
			return err
		}
		f.plan = plan
	}
	scale := T(1)
	if size := s.param.GetIterSize(); size > 1 {
		scale = T(1 / float64(size))
	}
	v.SGDStep(f.plan, rate, T(s.param.GetMomentum()), scale, s.param.GetRegularizationType() == "L1")
	return v.Err()
}

func (f *fusedSGD[T]) close() error {
	if f.plan == nil {
		return nil
	}
	err := f.plan.Close()
	f.plan = nil
	return err
}
