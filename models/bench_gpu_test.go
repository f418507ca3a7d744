package models_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/solver"
)

// The LeNet iteration benchmarks on the GPU, waiting for the device after
// each iteration.

func BenchmarkLeNetIterationGPU(b *testing.B) {
	benchLeNetGPU(b, func(p *caffepb.NetParameter) { withDummyData(b, p, lenetItem, lenetBatch) })
}

func BenchmarkLeNetIterationGPUInput(b *testing.B) {
	benchLeNetGPU(b, func(p *caffepb.NetParameter) { withInput(b, p, lenetItem, lenetBatch) })
}

func BenchmarkLeNetIterationGPUData(b *testing.B) {
	benchLeNetGPU(b, func(p *caffepb.NetParameter) { withLMDB(b, p, 4096) })
}

func benchLeNetGPU(b *testing.B, feed func(*caffepb.NetParameter)) {
	ctx := device.New(cudatest.Device(b))
	benchLeNet(b, solver.Options{Context: ctx}, func() {
		if err := ctx.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}, feed)
}
