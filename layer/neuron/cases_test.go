package neuron_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/layer/layertest"
)

// cases are this package's gradient and parity checks, which its test
// files add in their init functions (see layertest.Cases).
var cases layertest.Cases

// TestCases runs them, and fails for a type of the package without them.
func TestCases(t *testing.T) {
	noGradient := map[string]bool{
		"Threshold": true, // a step: nothing continuous to check
	}
	var parityElsewhere map[string]bool
	cases.Run(t, "github.com/gocaffe/gocaffe/layer/neuron", noGradient, parityElsewhere)
}
