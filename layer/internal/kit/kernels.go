package kit

import (
	"embed"
	"fmt"
	"strings"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/mathfn"
)

//go:embed kernels/common.cuh kernels/broadcast.cu kernels/tanh.cu kernels/precision.cu
var kitFiles embed.FS

// common is the header every kernel file is compiled with
// (kernels/common.cuh: the grid-stride loop, BOTH_TYPES).
var common = mustRead(kitFiles, "kernels/common.cuh")

func mustRead(fs embed.FS, name string) string {
	b, err := fs.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time: cannot fail
	}
	return string(b)
}

// Kernels are one package's CUDA C kernel files, kernels/*.cu embedded in
// Files, compiled by NVRTC on their first use on a device (see
// device.Context.Kernel) after the common header. A family package of
// layers declares them once:
//
//	//go:embed kernels/*.cu
//	var kernelFiles embed.FS
//	var kernels = &kit.Kernels{Package: "layer/neuron", Files: kernelFiles}
type Kernels struct {
	// Package names the files in the context's cache and in messages
	// ("layer/neuron": program "layer/neuron/kernels/relu.cu").
	Package string
	// Files holds the kernel files under kernels/.
	Files embed.FS
}

// kitKernels are the kit's own (broadcast.cu, tanh.cu).
var kitKernels = &Kernels{Package: "layer/internal/kit", Files: kitFiles}

// program is the cache name of file.
func (k *Kernels) program(file string) string { return k.Package + "/kernels/" + file }

// source returns the text of a program of k: the common header, then the
// file's own.
func (k *Kernels) source(program string) (string, error) {
	file := strings.TrimPrefix(program, k.Package+"/")
	src, err := k.Files.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: no kernel file %s: %w", k.Package, file, err)
	}
	return common + string(src), nil
}

// Kernel returns kernel name (with the _f32 or _f64 suffix for T) of k's
// file, compiled for the context's device on its first use there.
func Kernel[T Float](c *device.Context, k *Kernels, file, name string) (*cuda.Function, error) {
	var zero T
	if _, ok := any(zero).(float64); ok {
		name += "_f64"
	} else {
		name += "_f32"
	}
	return c.Kernel(k.program(file), name, k.source)
}

// ThreadsPerBlock is Caffe's CAFFE_CUDA_NUM_THREADS.
const ThreadsPerBlock = 512

// Launch runs kernel name of k's file over n elements (one thread each,
// in blocks of ThreadsPerBlock) on the context's compute stream.
func Launch[T Float](c *device.Context, k *Kernels, file, name string, n int, args *cuda.Args) error {
	if n == 0 {
		return nil
	}
	f, err := Kernel[T](c, k, file, name)
	if err != nil {
		return err
	}
	return f.Launch(cuda.Dim3{X: mathfn.Blocks(n)}, cuda.Dim3{X: ThreadsPerBlock}, 0, nil, args)
}

// LaunchBlocks runs kernel name of k's file with one block of
// ThreadsPerBlock threads per group (kernels that reduce a group, a
// channel, in shared memory).
func LaunchBlocks[T Float](c *device.Context, k *Kernels, file, name string, groups int, args *cuda.Args) error {
	if groups == 0 {
		return nil
	}
	f, err := Kernel[T](c, k, file, name)
	if err != nil {
		return err
	}
	return f.Launch(cuda.Dim3{X: groups}, cuda.Dim3{X: ThreadsPerBlock}, 0, nil, args)
}

// ScalarArg appends a T kernel argument.
func ScalarArg[T Float](a *cuda.Args, v T) *cuda.Args {
	var zero T
	if _, ok := any(zero).(float64); ok {
		return a.Float64(float64(v))
	}
	return a.Float32(float32(v))
}
