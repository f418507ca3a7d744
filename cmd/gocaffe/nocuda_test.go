//go:build !cuda

package main

import (
	"strings"
	"testing"
)

func TestDeviceQueryWithoutCUDA(t *testing.T) {
	code, _, stderr := runCmd("device_query", "-gpu", "0")
	if code != 1 || !strings.Contains(stderr, "built without CUDA support") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
