package datalayer

import (
	"embed"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/internal/kit"
)

//go:embed kernels/*.cu
var kernelFiles embed.FS

// kernels are the package's CUDA kernels (kernels/*.cu).
var kernels = &kit.Kernels{Package: "layer/datalayer", Files: kernelFiles}

// launch runs kernel name of kernels/file over n elements (kit.Launch).
func launch[T layer.Float](c *device.Context, file, name string, n int, args *cuda.Args) error {
	return kit.Launch[T](c, kernels, file, name, n, args)
}

// kernel returns kernel name of kernels/file (kit.Kernel).
func kernel[T layer.Float](c *device.Context, file, name string) (*cuda.Function, error) {
	return kit.Kernel[T](c, kernels, file, name)
}
