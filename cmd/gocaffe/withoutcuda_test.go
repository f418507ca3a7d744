package main

import (
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/cuda"
)

func TestDeviceQueryWithoutCUDA(t *testing.T) {
	if cuda.Available() {
		t.Skip("built with CUDA")
	}
	code, _, stderr := runCmd("device_query", "-gpu", "0")
	if code != 1 || !strings.Contains(stderr, "built without CUDA support") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
