package datalayer_test

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
		"Input":         true, // no backward pass
		"DummyData":     true, // no backward pass
		"Data":          true, // no backward pass
		"ImageData":     true, // no backward pass
		"MemoryData":    true, // no backward pass
		"HDF5Data":      true, // no backward pass
		"HDF5Output":    true, // no backward pass
		"WindowData":    true, // no backward pass
		"AnnotatedData": true, // no backward pass
		"VideoData":     true, // no backward pass
	}
	parityElsewhere := map[string]bool{
		"Data":          true, // checked in data_gpu_test.go, with files made at run time
		"ImageData":     true, // checked in data_gpu_test.go, with files made at run time
		"MemoryData":    true, // checked in data_gpu_test.go, with files made at run time
		"HDF5Data":      true, // checked in data_gpu_test.go, with files made at run time
		"HDF5Output":    true, // checked in data_gpu_test.go, with files made at run time
		"WindowData":    true, // checked in data_gpu_test.go, with files made at run time
		"AnnotatedData": true, // checked in data_gpu_test.go, with files made at run time
		"VideoData":     true, // checked in data_gpu_test.go, with files made at run time
	}
	cases.Run(t, "github.com/gocaffe/gocaffe/layer/datalayer", noGradient, parityElsewhere)
}
