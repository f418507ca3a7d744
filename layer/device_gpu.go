package layer

import (
	"embed"
	"fmt"
	"sync"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// gpu is the GPU's device view. Accessor failures panic with a
// *syncedmem.DeviceError, which Forward and Backward return as the layer's
// error.
type gpu[T Float] struct{ *mathfn.GPU[T] }

func devicePtr(p cuda.DevicePtr, err error) cuda.DevicePtr {
	if err != nil {
		panic(&syncedmem.DeviceError{Op: "blob on the device", Err: err})
	}
	return p
}

func (gpu[T]) data(b *blob.Blob[T]) cuda.DevicePtr        { return devicePtr(b.GPUData()) }
func (gpu[T]) mutableData(b *blob.Blob[T]) cuda.DevicePtr { return devicePtr(b.MutableGPUData()) }
func (gpu[T]) diff(b *blob.Blob[T]) cuda.DevicePtr        { return devicePtr(b.GPUDiff()) }
func (gpu[T]) mutableDiff(b *blob.Blob[T]) cuda.DevicePtr { return devicePtr(b.MutableGPUDiff()) }

// gpuOf returns the layer's GPU view, made once per layer so that a pass
// allocates nothing, with any error of an earlier pass cleared.
func gpuOf[T Float](b *Base[T]) gpu[T] {
	g, ok := b.gpu.(*mathfn.GPU[T])
	if !ok || g.Device() != b.dev {
		ng := mathfn.NewGPU[T](b.dev)
		g = &ng
		b.gpu = g
	}
	g.ResetErr()
	return gpu[T]{g}
}

// gpuLoss is the weighted loss of the tops, computed on the device.
func gpuLoss[T Float](b *Base[T], top []*blob.Blob[T]) (T, error) {
	var loss T
	g := gpuOf(b)
	for i, t := range top {
		if b.Loss(i) != 0 {
			loss += g.Dot(t.Count(), g.data(t), g.diff(t))
		}
	}
	return loss, g.Err()
}

//go:embed kernels/common.cuh kernels/*.cu
var kernelFiles embed.FS

type kernelKey struct {
	dev  *cuda.Device
	file string
	name string
}

var (
	kernelMu  sync.RWMutex
	kernelFns = map[kernelKey]*cuda.Function{}
)

// kernel returns kernel name (with the _f32 or _f64 suffix for T) from
// kernels/file, compiling the file for the device on first use.
func kernel[T Float](d *cuda.Device, file, name string) (*cuda.Function, error) {
	var zero T
	if _, ok := any(zero).(float64); ok {
		name += "_f64"
	} else {
		name += "_f32"
	}
	key := kernelKey{d, file, name}
	kernelMu.RLock()
	f, ok := kernelFns[key]
	kernelMu.RUnlock()
	if ok {
		return f, nil
	}
	common, err := kernelFiles.ReadFile("kernels/common.cuh")
	if err != nil {
		return nil, err
	}
	src, err := kernelFiles.ReadFile("kernels/" + file)
	if err != nil {
		return nil, fmt.Errorf("layer: no kernel file %s: %w", file, err)
	}
	mod, err := d.Compile("layer/kernels/"+file, string(common)+string(src))
	if err != nil {
		return nil, err
	}
	if f, err = mod.Function(name); err != nil {
		return nil, err
	}
	kernelMu.Lock()
	kernelFns[key] = f
	kernelMu.Unlock()
	return f, nil
}

// threadsPerBlock is Caffe's CAFFE_CUDA_NUM_THREADS.
const threadsPerBlock = 512

// launch runs kernel name of file over n elements (one thread each, in
// blocks of 512) on the layer's compute stream.
func launch[T Float](d *cuda.Device, file, name string, n int, args *cuda.Args) error {
	if n == 0 {
		return nil
	}
	f, err := kernel[T](d, file, name)
	if err != nil {
		return err
	}
	return f.Launch(cuda.Dim3{X: mathfn.Blocks(n)}, cuda.Dim3{X: threadsPerBlock}, 0, nil, args)
}

// scalarArg appends a T kernel argument.
func scalarArg[T Float](a *cuda.Args, v T) *cuda.Args {
	var zero T
	if _, ok := any(zero).(float64); ok {
		return a.Float64(float64(v))
	}
	return a.Float32(float32(v))
}
