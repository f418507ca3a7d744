package utility_test

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
		"Silence": true, // nothing to differentiate
		"ArgMax":  true, // no backward pass
		"Embed":   true, // checked in its own tests, on the parameters only (its bottom holds indices)
		"Filter":  true, // checked in its own tests, one bottom at a time (the selector holds indices)
	}
	var parityElsewhere map[string]bool
	cases.Run(t, "github.com/gocaffe/gocaffe/layer/utility", noGradient, parityElsewhere)
}
