package layertest

import (
	"errors"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/mathfn"
)

// CheckGPUParity builds the layer twice, on the CPU and on device 0, sets
// both up on the same bottoms, gives the GPU layer the CPU layer's learnable
// blobs, and checks that forward (tops, loss) and backward (bottom and
// parameter diffs) agree. Top diffs are random, except on loss tops, which
// keep their loss weight.
func CheckGPUParity[T layer.Float](t *testing.T, p Parity) {
	t.Helper()
	if p.Tol == 0 {
		p.Tol = 1e-4
		var z T
		if _, ok := any(z).(float64); ok {
			p.Tol = 1e-10
		}
	}
	if p.Repeat == 0 {
		p.Repeat = 2
	}
	if p.Lo == 0 && p.Hi == 0 {
		p.Lo, p.Hi = -1, 1
	}
	dev := cudatest.Device(t)
	ctx := p.Context
	if ctx == nil {
		ctx = device.New(dev)
	}
	dev = ctx.Device()
	cpu, gpu := New[T](t, p.Layer), New[T](t, p.Layer)
	gpu.LayerBase().SetContext(ctx)
	cpu.LayerBase().SetRNG(mathfn.NewRNG(1))
	gpu.LayerBase().SetRNG(mathfn.NewRNG(1))
	var cpuBottom, gpuBottom []*blob.Blob[T]
	for _, shape := range p.Bottom {
		cpuBottom = append(cpuBottom, Blob[T](t, shape...))
		gb := Blob[T](t, shape...)
		gb.SetDevice(dev)
		gpuBottom = append(gpuBottom, gb)
	}
	for i := range cpuBottom {
		vals := make([]float64, cpuBottom[i].Count())
		if p.Fill != nil {
			p.Fill(i, vals)
		} else {
			r := mathfn.NewRNG(uint64(100 + i))
			mathfn.RngUniform(len(vals), p.Lo, p.Hi, vals, r)
		}
		for j, v := range vals {
			cpuBottom[i].MutableCPUData()[j] = T(v)
			gpuBottom[i].MutableCPUData()[j] = T(v)
		}
	}
	nTop := len(cpu.LayerBase().Param().GetTop())
	if nTop == 0 {
		nTop = cpu.Counts().Top.Min
	}
	cpuTop, gpuTop := Blobs[T](t, nTop), Blobs[T](t, nTop)
	for _, b := range gpuTop {
		b.SetDevice(dev)
	}
	SetUp(t, cpu, cpuBottom, cpuTop)
	SetUp(t, gpu, gpuBottom, gpuTop)
	if p.Reduced.Reduced() {
		setReduced(t, gpu, p, gpuBottom, gpuTop)
	}
	for i, b := range cpu.LayerBase().Blobs() {
		if err := gpu.LayerBase().Blobs()[i].CopyFrom(b, false, true); err != nil {
			t.Fatal(err)
		}
	}
	propagate := AllTrue(len(cpuBottom))
	for _, i := range p.NoPropagate {
		propagate[i] = false
	}
	for pass := range p.Repeat {
		cpuLoss, gpuLoss := Forward(t, cpu, cpuBottom, cpuTop), Forward(t, gpu, gpuBottom, gpuTop)
		CheckClose(t, cpu.Type()+" loss", []T{gpuLoss}, []T{cpuLoss}, p.Tol)
		for i := range cpuTop {
			CheckClose(t, cpu.Type()+" forward top", gpuTop[i].CPUData(), cpuTop[i].CPUData(), p.Tol)
			if cpu.LayerBase().Loss(i) == 0 {
				r := mathfn.NewRNG(uint64(200 + 10*pass + i))
				mathfn.RngUniform(cpuTop[i].Count(), -1, 1, cpuTop[i].MutableCPUDiff(), r)
				copy(gpuTop[i].MutableCPUDiff(), cpuTop[i].CPUDiff())
			}
		}
		for _, b := range cpu.LayerBase().Blobs() {
			mathfn.Set(b.Count(), 0, b.MutableCPUDiff())
		}
		for _, b := range gpu.LayerBase().Blobs() {
			mathfn.Set(b.Count(), 0, b.MutableCPUDiff())
		}
		Backward(t, cpu, cpuTop, propagate, cpuBottom)
		Backward(t, gpu, gpuTop, propagate, gpuBottom)
		for i := range cpuBottom {
			if propagate[i] {
				CheckClose(t, cpu.Type()+" backward bottom diff", gpuBottom[i].CPUDiff(), cpuBottom[i].CPUDiff(), p.Tol)
			}
		}
		for i, b := range cpu.LayerBase().Blobs() {
			CheckClose(t, cpu.Type()+" backward param diff", gpu.LayerBase().Blobs()[i].CPUDiff(), b.CPUDiff(), p.Tol)
			CheckClose(t, cpu.Type()+" param data", gpu.LayerBase().Blobs()[i].CPUData(), b.CPUData(), p.Tol)
		}
		if t.Failed() {
			return
		}
	}
}

// setReduced makes the GPU layer compute in p.Reduced and, with
// p.StoreReduced, stores its bottoms and tops in it.
func setReduced[T layer.Float](t *testing.T, l layer.Layer[T], p Parity, bottom, top []*blob.Blob[T]) {
	t.Helper()
	if err := layer.SetReduced(l, p.Reduced); err != nil {
		t.Fatal(err)
	}
	if !p.StoreReduced {
		return
	}
	for _, b := range append(slices.Clone(bottom), top...) {
		if err := b.SetStorage(p.Reduced); err != nil {
			t.Fatal(err)
		}
	}
}

// NeedDNN returns a context on the GPU machine's device, skipping the test
// where there is no GPU or no cuDNN on it.
func NeedDNN(t *testing.T) *device.Context {
	t.Helper()
	ctx := device.New(cudatest.Device(t))
	if _, err := ctx.DNN(); err != nil {
		if errors.Is(err, cuda.ErrNoCuDNN) {
			t.Skipf("no cuDNN here: %v", err)
		}
		t.Fatal(err)
	}
	return ctx
}
