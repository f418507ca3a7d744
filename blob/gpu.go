package blob

import (
	"fmt"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// The device halves of the blob arithmetic (see ops.go), reached only when a
// head is on the device, which a build without CUDA never has, and no
// operand stores reduced (16-bit) elements, which cuBLAS would misread. Like the host
// accessors they return no error: a failure here means the device itself
// failed, and they panic with a *syncedmem.DeviceError, which the net and
// solver turn back into an error.

// gpuOf returns the GPU math of the device holding m's device copy, and the
// copy itself for reading (or writing, if mutable). The blob arithmetic is
// all cuBLAS and copies, so the math is BLAS-only: a blob needs no device
// context and no kernels.
func gpuOf[T Float](m *syncedmem.SyncedMemory, mutable bool, op string) (mathfn.GPU[T], cuda.DevicePtr) {
	get := m.GPUData
	if mutable {
		get = m.MutableGPUData
	}
	p, err := get()
	if err != nil {
		panic(&syncedmem.DeviceError{Op: op, Err: err})
	}
	return mathfn.NewGPU[T](m.GPUDevice(), nil), p
}

func check[T Float](g *mathfn.GPU[T], op string) {
	if err := g.Err(); err != nil {
		panic(&syncedmem.DeviceError{Op: op, Err: err})
	}
}

func gpuAxpy[T Float](n int, alpha T, x, y *syncedmem.SyncedMemory) {
	px, err := x.GPUData()
	if err != nil {
		panic(&syncedmem.DeviceError{Op: "blob update", Err: err})
	}
	g, py := gpuOf[T](y, true, "blob update")
	g.Axpy(n, alpha, px, py)
	check(&g, "blob update")
}

func gpuAsum[T Float](n int, x *syncedmem.SyncedMemory) T {
	g, p := gpuOf[T](x, false, "blob asum")
	v := g.Asum(n, p)
	check(&g, "blob asum")
	return v
}

func gpuDot[T Float](n int, x, y *syncedmem.SyncedMemory) T {
	g, px := gpuOf[T](x, false, "blob sumsq")
	py, err := y.GPUData()
	if err != nil {
		panic(&syncedmem.DeviceError{Op: "blob sumsq", Err: err})
	}
	v := g.Dot(n, px, py)
	check(&g, "blob sumsq")
	return v
}

func gpuScal[T Float](n int, alpha T, x *syncedmem.SyncedMemory) {
	g, p := gpuOf[T](x, true, "blob scale")
	g.Scal(n, alpha, p)
	check(&g, "blob scale")
}

// gpuCopy copies nbytes device bytes between the device copies of two
// memories, which must store their elements alike (see
// syncedmem.Storage).
func gpuCopy(nbytes int, from, to *syncedmem.SyncedMemory) error {
	if from.Storage() != to.Storage() {
		return fmt.Errorf("blob: device copy from %v to %v storage", from.Storage(), to.Storage())
	}
	src, err := from.GPUData()
	if err != nil {
		return err
	}
	dst, err := to.MutableGPUData()
	if err != nil {
		return err
	}
	return to.GPUDevice().CopyDtoD(dst, src, nbytes)
}
