package solver

import (
	"fmt"
	"math"
	"slices"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

var policies = []string{"fixed", "step", "exp", "inv", "multistep", "poly", "sigmoid"}

// Policies returns the learning rate policies (a new slice each call).
func Policies() []string { return slices.Clone(policies) }

// checkPolicy validates the learning rate policy's parameters up front, so
// a bad solver file fails at start rather than at the first update.
func checkPolicy(p *caffepb.SolverParameter) error {
	policy := p.GetLrPolicy()
	switch policy {
	case "fixed", "exp", "inv", "poly":
	case "step":
		if p.GetStepsize() <= 0 {
			return fmt.Errorf("lr_policy \"step\" needs a positive stepsize, got %d", p.GetStepsize())
		}
	case "multistep":
		for i := 1; i < len(p.Stepvalue); i++ {
			if p.Stepvalue[i] <= p.Stepvalue[i-1] {
				return fmt.Errorf("lr_policy \"multistep\": stepvalue must increase, got %v", p.Stepvalue)
			}
		}
	case "sigmoid":
		if p.GetStepsize() <= 0 {
			return fmt.Errorf("lr_policy \"sigmoid\" needs a positive stepsize, got %d", p.GetStepsize())
		}
	case "":
		return fmt.Errorf("lr_policy is not set (one of %v)", policies)
	default:
		return fmt.Errorf("unknown learning rate policy %q (known: %v)", policy, policies)
	}
	if policy != "fixed" && policy != "poly" && p.GetGamma() < 0 {
		return fmt.Errorf("lr_policy %q needs gamma >= 0, got %v", policy, p.GetGamma())
	}
	return nil
}

// learningRate returns the rate for the current iteration (Caffe's
// GetLearningRate). The multistep policy advances currentStep, at most one
// step per call, as Caffe does.
func learningRate(p *caffepb.SolverParameter, iter int, currentStep *int) float64 {
	base, gamma, power := float64(p.GetBaseLr()), float64(p.GetGamma()), float64(p.GetPower())
	switch p.GetLrPolicy() {
	case "step":
		*currentStep = iter / int(p.GetStepsize())
		return base * math.Pow(gamma, float64(*currentStep))
	case "exp":
		return base * math.Pow(gamma, float64(iter))
	case "inv":
		return base * math.Pow(1+gamma*float64(iter), -power)
	case "multistep":
		if *currentStep < len(p.Stepvalue) && iter >= int(p.Stepvalue[*currentStep]) {
			*currentStep++
		}
		return base * math.Pow(gamma, float64(*currentStep))
	case "poly":
		return base * math.Pow(1-float64(iter)/float64(p.GetMaxIter()), power)
	case "sigmoid":
		return base / (1 + math.Exp(-gamma*(float64(iter)-float64(p.GetStepsize()))))
	}
	return base
}
