//go:build cuda

package models_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/solver"
)

// BenchmarkLeNetIterationGPU is BenchmarkLeNetIteration on the GPU.
func BenchmarkLeNetIterationGPU(b *testing.B) {
	dev := cudatest.Device(b)
	benchLeNet(b, solver.Options{Device: dev}, func() {
		if err := dev.Stream().Synchronize(); err != nil {
			b.Fatal(err)
		}
	})
}
