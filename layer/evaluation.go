package layer

import (
	"fmt"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// TestEvaluation scores one output of a test net over the test
// iterations, for a solver whose eval_type is one a package of layers
// registered (RegisterEvalType), rather than Caffe's "classification",
// whose outputs are averaged: SSD's "detection" gathers DetectionEvaluate's
// rows and scores their mean average precision. This is how the solver
// reaches an evaluation without knowing the layers that feed it.
type TestEvaluation interface {
	// Add takes one test iteration's values of the output, of the given
	// shape; an error says the output is not what the evaluation reads.
	Add(shape []int, values []float32) error
	// Score returns the output's score over what was added, as the
	// solver's parameter asks (SSD's ap_version).
	Score(sp *caffepb.SolverParameter) (float64, error)
}

var evalTypes = nameMap[func() TestEvaluation]{m: map[string]func() TestEvaluation{}}

// RegisterEvalType makes the solver score its test nets' outputs with a
// new evaluation from newEval when its eval_type is name. Registering a
// name twice is an error.
func RegisterEvalType(name string, newEval func() TestEvaluation) error {
	if name == "" || newEval == nil {
		return fmt.Errorf("layer: RegisterEvalType(%q) needs a name and a constructor", name)
	}
	return evalTypes.add(name, newEval, "evaluation type")
}

// NewTestEvaluation returns a new evaluation of the registered type name,
// or nil when no package registered it.
func NewTestEvaluation(name string) TestEvaluation {
	if f := evalTypes.get(name); f != nil {
		return f()
	}
	return nil
}
