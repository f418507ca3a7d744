package layer

import (
	"embed"
	"fmt"
	"strings"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/mathfn"
)

// makeView makes the layer's view of its GPU context, once: its math
// (loading the context's kernels on their first use) and accessors.
func (b *Base[T]) makeView() error {
	if b.view != nil {
		return nil
	}
	v, err := device.NewGPUView[T](b.ctx)
	if err != nil {
		return err
	}
	b.view = v
	return nil
}

// gpu returns the layer's view of its GPU context for a new pass, with any
// error of an earlier pass cleared. Forward and Backward make it before a
// GPU pass.
func (b *Base[T]) gpu() *device.GPUView[T] {
	b.view.ResetErr()
	return b.view
}

// gpuLoss is the weighted loss of the tops, computed on the device and
// read back. A NaN loss is explained by the engine where it can say why
// (nanExplainer: a label out of range), reading what it needs only then.
func gpuLoss[T Float](l Layer[T], top []*blob.Blob[T]) (T, error) {
	var loss T
	b := l.LayerBase()
	g := b.gpu()
	for i, t := range top {
		if b.Loss(i) != 0 {
			loss += g.Dot(t.Count(), g.Data(t), g.Diff(t))
		}
	}
	if err := g.Err(); err != nil {
		return 0, err
	}
	if loss != loss {
		if err := ExplainNaN(l); err != nil {
			return 0, err
		}
	}
	return loss, nil
}

// gpuLossInto adds the weighted loss of the tops to acc[0] on the device.
func gpuLossInto[T Float](b *Base[T], top []*blob.Blob[T], acc *blob.Blob[T]) error {
	g := b.gpu()
	for i, t := range top {
		if b.Loss(i) != 0 {
			g.DotAccumulate(t.Count(), g.Data(t), g.Diff(t), 1, g.MutableData(acc))
		}
	}
	return g.Err()
}

// nanExplainer is an engine that can say why its loss came out NaN, from
// its inputs of the last forward pass (a label that is no class). It is
// asked only once the loss has been read back as NaN.
type nanExplainer interface{ explainNaN() error }

// ExplainNaN asks the layer why its last loss was NaN: an error naming the
// layer and the cause where its engine can tell (SoftmaxWithLoss: a label
// out of range, else "loss is NaN", which its forward pass reported before
// its loss stayed on the device), nil for other layers. The solver asks
// after a replayed CUDA graph, which reads no label back while it runs.
func ExplainNaN[T Float](l Layer[T]) error {
	e, ok := l.LayerBase().engine.(nanExplainer)
	if !ok {
		return nil
	}
	if err := e.explainNaN(); err != nil {
		return errorf(l, err)
	}
	return nil
}

//go:embed kernels/common.cuh kernels/*.cu
var kernelFiles embed.FS

// kernelSource returns the text of program layer/kernels/<file>: the
// kernels common to all files, then the file's own.
func kernelSource(program string) (string, error) {
	common, err := kernelFiles.ReadFile("kernels/common.cuh")
	if err != nil {
		return "", err
	}
	src, err := kernelFiles.ReadFile(strings.TrimPrefix(program, "layer/"))
	if err != nil {
		return "", fmt.Errorf("layer: no kernel file %s: %w", program, err)
	}
	return string(common) + string(src), nil
}

// kernel returns kernel name (with the _f32 or _f64 suffix for T) from
// kernels/file, compiled for the context's device on its first use there.
func kernel[T Float](c *device.Context, file, name string) (*cuda.Function, error) {
	var zero T
	if _, ok := any(zero).(float64); ok {
		name += "_f64"
	} else {
		name += "_f32"
	}
	return c.Kernel("layer/kernels/"+file, name, kernelSource)
}

// threadsPerBlock is Caffe's CAFFE_CUDA_NUM_THREADS.
const threadsPerBlock = 512

// launch runs kernel name of file over n elements (one thread each, in
// blocks of 512) on the context's compute stream.
func launch[T Float](c *device.Context, file, name string, n int, args *cuda.Args) error {
	if n == 0 {
		return nil
	}
	f, err := kernel[T](c, file, name)
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
