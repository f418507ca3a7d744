package layer_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/layer/layertest"
)

// cases are the checks of the contract's own type, Python (through the Go
// layer a test registers for a Python class).
var cases layertest.Cases

// TestCases runs them.
func TestCases(t *testing.T) {
	// engine_test.go's own types compute nothing.
	none := map[string]bool{"EngineTest": true, "EngineTestHost": true}
	cases.Run(t, "github.com/gocaffe/gocaffe/layer", none, none)
}
