package solver

import (
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Policy is a learning rate policy, the value of SolverParameter.lr_policy.
type Policy struct {
	// Check, if not nil, validates the parameters the policy reads; it runs
	// at New, so that a bad solver file fails at the start rather than at
	// the first update.
	Check func(p *caffepb.SolverParameter) error
	// Rate returns the learning rate of iteration iter (Caffe's
	// GetLearningRate). step is the solver's current step, which snapshots
	// save; a policy that counts its steps as it goes ("multistep")
	// advances it, the others may set it or leave it.
	Rate func(p *caffepb.SolverParameter, iter int, step *int) float64
}

// policies is the registry of learning rate policies.
var policies = registry[Policy]{what: "learning rate policy", m: map[string]Policy{}}

// RegisterPolicy makes a learning rate policy available under name, the
// string of SolverParameter.lr_policy. Caffe's policies (fixed, step, exp,
// inv, multistep, poly, sigmoid) are registered the same way; registering a
// name twice is an error.
func RegisterPolicy(name string, p Policy) error {
	if name == "" || p.Rate == nil {
		return fmt.Errorf("solver: RegisterPolicy(%q) needs a name and a Rate function", name)
	}
	return policies.add(name, p)
}

// Policies returns the registered learning rate policies, sorted.
func Policies() []string { return policies.names() }

// policyOf looks up and checks the learning rate policy of p.
func policyOf(p *caffepb.SolverParameter) (Policy, error) {
	name := p.GetLrPolicy()
	pol, ok := policies.get(name)
	switch {
	case name == "":
		return Policy{}, fmt.Errorf("lr_policy is not set (one of %v)", Policies())
	case !ok:
		return Policy{}, fmt.Errorf("unknown learning rate policy %q (known: %v)", name, Policies())
	}
	if pol.Check != nil {
		if err := pol.Check(p); err != nil {
			return Policy{}, err
		}
	}
	return pol, nil
}

// Caffe's policies. All but fixed and poly need gamma >= 0; step and
// sigmoid a positive stepsize, multistep increasing stepvalues.
func init() {
	for name, pol := range map[string]Policy{
		"fixed": {Rate: func(p *caffepb.SolverParameter, _ int, _ *int) float64 { return float64(p.GetBaseLr()) }},
		"step":  {Check: checks(positiveStepsize("step"), gammaNotNegative("step")), Rate: stepRate},
		"exp": {Check: gammaNotNegative("exp"), Rate: func(p *caffepb.SolverParameter, iter int, _ *int) float64 {
			return float64(p.GetBaseLr()) * math.Pow(float64(p.GetGamma()), float64(iter))
		}},
		"inv": {Check: gammaNotNegative("inv"), Rate: func(p *caffepb.SolverParameter, iter int, _ *int) float64 {
			return float64(p.GetBaseLr()) * math.Pow(1+float64(p.GetGamma())*float64(iter), -float64(p.GetPower()))
		}},
		"multistep": {Check: checks(increasingStepvalues, gammaNotNegative("multistep")), Rate: multistepRate},
		"poly": {Rate: func(p *caffepb.SolverParameter, iter int, _ *int) float64 {
			return float64(p.GetBaseLr()) * math.Pow(1-float64(iter)/float64(p.GetMaxIter()), float64(p.GetPower()))
		}},
		"sigmoid": {Check: checks(positiveStepsize("sigmoid"), gammaNotNegative("sigmoid")), Rate: func(p *caffepb.SolverParameter, iter int, _ *int) float64 {
			return float64(p.GetBaseLr()) / (1 + math.Exp(-float64(p.GetGamma())*(float64(iter)-float64(p.GetStepsize()))))
		}},
	} {
		if err := RegisterPolicy(name, pol); err != nil {
			panic(err)
		}
	}
}

// stepRate is base_lr * gamma^floor(iter/stepsize); the step is
// iter/stepsize.
func stepRate(p *caffepb.SolverParameter, iter int, step *int) float64 {
	*step = iter / int(p.GetStepsize())
	return float64(p.GetBaseLr()) * math.Pow(float64(p.GetGamma()), float64(*step))
}

// multistepRate is base_lr * gamma^step, the step advancing, at most once
// per call, when iter reaches the next stepvalue, as Caffe does.
func multistepRate(p *caffepb.SolverParameter, iter int, step *int) float64 {
	if *step < len(p.Stepvalue) && iter >= int(p.Stepvalue[*step]) {
		*step++
	}
	return float64(p.GetBaseLr()) * math.Pow(float64(p.GetGamma()), float64(*step))
}

// checks runs several checks, stopping at the first error.
func checks(cs ...func(*caffepb.SolverParameter) error) func(*caffepb.SolverParameter) error {
	return func(p *caffepb.SolverParameter) error {
		for _, c := range cs {
			if err := c(p); err != nil {
				return err
			}
		}
		return nil
	}
}

func positiveStepsize(policy string) func(*caffepb.SolverParameter) error {
	return func(p *caffepb.SolverParameter) error {
		if p.GetStepsize() <= 0 {
			return fmt.Errorf("lr_policy %q needs a positive stepsize, got %d", policy, p.GetStepsize())
		}
		return nil
	}
}

func gammaNotNegative(policy string) func(*caffepb.SolverParameter) error {
	return func(p *caffepb.SolverParameter) error {
		if p.GetGamma() < 0 {
			return fmt.Errorf("lr_policy %q needs gamma >= 0, got %v", policy, p.GetGamma())
		}
		return nil
	}
}

func increasingStepvalues(p *caffepb.SolverParameter) error {
	for i := 1; i < len(p.Stepvalue); i++ {
		if p.Stepvalue[i] <= p.Stepvalue[i-1] {
			return fmt.Errorf("lr_policy \"multistep\": stepvalue must increase, got %v", p.Stepvalue)
		}
	}
	return nil
}
