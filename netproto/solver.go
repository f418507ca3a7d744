package netproto

import (
	"fmt"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// legacySolverTypes maps the deprecated solver_type enum to the type
// strings that replaced it.
var legacySolverTypes = map[caffepb.SolverParameter_SolverType]string{
	caffepb.SolverParameter_SGD: "SGD", caffepb.SolverParameter_NESTEROV: "Nesterov",
	caffepb.SolverParameter_ADAGRAD: "AdaGrad", caffepb.SolverParameter_RMSPROP: "RMSProp",
	caffepb.SolverParameter_ADADELTA: "AdaDelta", caffepb.SolverParameter_ADAM: "Adam",
}

// SolverType is the solver's type, from `type` or else from the deprecated
// `solver_type` enum.
func SolverType(p *caffepb.SolverParameter) string {
	if p.SolverType != nil && p.Type == nil {
		return legacySolverTypes[p.GetSolverType()]
	}
	return p.GetType()
}

// SolverNeedsUpgrade reports whether p uses the deprecated solver_type.
func SolverNeedsUpgrade(p *caffepb.SolverParameter) bool { return p.SolverType != nil }

// UpgradeSolver moves the deprecated solver_type enum into `type`, as
// Caffe's UpgradeSolverAsNeeded does; both set is an error, as in Caffe.
func UpgradeSolver(p *caffepb.SolverParameter) error {
	if p.SolverType == nil {
		return nil
	}
	name, ok := legacySolverTypes[p.GetSolverType()]
	if !ok {
		return fmt.Errorf("solver_type %v has no type string", p.GetSolverType())
	}
	if p.Type != nil {
		return fmt.Errorf("the old solver_type field (%v) and the new type field (%q) cannot be both specified", p.GetSolverType(), p.GetType())
	}
	p.Type, p.SolverType = &name, nil
	return nil
}
