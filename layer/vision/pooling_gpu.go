package vision

import (
	"fmt"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// poolingGPU is Pooling's GPU half.
type poolingGPU[T layer.Float] struct {
	l    *poolingLayer[T]
	half *poolingReduced[T] // computes in a 16-bit type when set (SetReduced)
	// offsets holds MAX's argmax as each maximum's byte offset in its
	// window (kernels/pooling.cu, max_pool_forward_offsets) where no mask
	// top asks for Caffe's plane indices and a window has at most 255
	// elements; the mask blob is then never allocated on the device.
	offsets    cuda.DevicePtr
	offsetsCap int
}

// maxWindowOffsets is the most elements a window may have for MAX to keep
// its argmax as byte offsets (255 marks an empty window).
const maxWindowOffsets = 255

// useOffsets reports whether MAX keeps its argmax in e.offsets.
func (e *poolingGPU[T]) useOffsets(top []*blob.Blob[T]) bool {
	l := e.l
	return l.method == caffepb.PoolingParameter_MAX && len(top) == 1 && l.kernelH*l.kernelW <= maxWindowOffsets
}

// Reshaped sizes the offsets for the top, once per growth: a CUDA graph
// records the address, which stays while the shapes do not grow.
func (e *poolingGPU[T]) Reshaped(bottom, top []*blob.Blob[T]) error {
	if !e.useOffsets(top) || top[0].Count() <= e.offsetsCap {
		return nil
	}
	if err := e.freeOffsets(); err != nil {
		return err
	}
	dev := e.l.Context().Device()
	p, err := dev.Alloc(max(top[0].Count(), 1))
	if err != nil {
		return fmt.Errorf("layer %s: argmax offsets of %d bytes: %w", e.l.Name(), top[0].Count(), err)
	}
	e.offsets, e.offsetsCap = p, top[0].Count()
	return nil
}

func (e *poolingGPU[T]) freeOffsets() error {
	if e.offsets == 0 {
		return nil
	}
	err := e.l.Context().Device().Free(e.offsets)
	e.offsets, e.offsetsCap = 0, 0
	return err
}

func newPoolingGPU[T layer.Float](l *poolingLayer[T]) layer.Engine[T] { return &poolingGPU[T]{l: l} }

// Forward pools on the device, one thread per output element.
func (e *poolingGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	if e.half != nil {
		return e.half.Forward(bottom, top)
	}
	l := e.l
	g := l.GPU()
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Int32s(l.geomArgs[:]).Ptr(g.MutableData(top[0]))
	switch l.method {
	case caffepb.PoolingParameter_MAX:
		if e.offsets != 0 && e.useOffsets(top) {
			a.Ptr(e.offsets)
			return launch[T](l.Context(), "pooling.cu", "max_pool_forward_offsets", n, &a)
		}
		a.Ptr(g.MutableData(l.indexBlob(top)))
		return launch[T](l.Context(), "pooling.cu", "max_pool_forward", n, &a)
	case caffepb.PoolingParameter_AVE:
		return launch[T](l.Context(), "pooling.cu", "ave_pool_forward", n, &a)
	}
	s := g.MutableData(l.sample)
	a.Ptr(s)
	if l.Phase() != caffepb.Phase_TRAIN {
		return launch[T](l.Context(), "pooling.cu", "sto_pool_forward_test", n, &a)
	}
	g.RngUniform(n, 0, 1, s, l.RNG())
	if err := g.Err(); err != nil {
		return err
	}
	return launch[T](l.Context(), "pooling.cu", "sto_pool_forward_train", n, &a)
}

// Backward computes the bottom's gradient on the device, one thread per
// bottom element (MAX from its argmax offsets: offsetBackward).
func (e *poolingGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if e.half != nil {
		return e.half.Backward(top, propagateDown, bottom)
	}
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0]))
	switch {
	case l.method == caffepb.PoolingParameter_MAX && e.offsets != 0 && e.useOffsets(top):
		name, threads := l.offsetBackward(bottom[0], top[0])
		var b cuda.Args
		b.Int(threads).Ptr(g.Diff(top[0])).Ptr(e.offsets).Int32s(l.geomArgs[:]).Ptr(g.MutableDiff(bottom[0]))
		return launch[T](l.Context(), "pooling.cu", name, threads, &b)
	case l.method == caffepb.PoolingParameter_MAX:
		a.Ptr(g.Data(l.indexBlob(top)))
	case l.method == caffepb.PoolingParameter_AVE:
		a.Int32s(l.geomArgs[:]).Ptr(g.MutableDiff(bottom[0]))
		return launch[T](l.Context(), "pooling.cu", "ave_pool_backward", n, &a)
	case l.Phase() == caffepb.Phase_TRAIN:
		a.Ptr(g.Data(l.sample))
	default:
		a.Ptr(g.Data(bottom[0])).Ptr(g.Data(top[0])).Ptr(g.Data(l.sample)).Int32s(l.geomArgs[:]).Ptr(g.MutableDiff(bottom[0]))
		return launch[T](l.Context(), "pooling.cu", "sto_pool_backward_test", n, &a)
	}
	a.Int32s(l.geomArgs[:]).Ptr(g.MutableDiff(bottom[0]))
	return launch[T](l.Context(), "pooling.cu", "index_pool_backward", n, &a)
}

// maxTileElems bounds the bottom elements one thread of offset_pool_tiles
// writes: a global pooling's single tile is its whole plane, which the
// kernel of a thread per element spreads better.
const maxTileElems = 64

// offsetBackward names the kernel of MAX's gradient from the argmax
// offsets and the threads it runs: offset_pool_tiles, a thread per output
// writing its stride-by-stride tile of the bottom, where the tiles are
// small, else offset_pool_backward, a thread per bottom element. Both
// compute the same bits.
func (l *poolingLayer[T]) offsetBackward(bottom, top *blob.Blob[T]) (string, int) {
	lastH := l.height - max((l.pooledH-1)*l.strideH-l.padH, 0)
	lastW := l.width - max((l.pooledW-1)*l.strideW-l.padW, 0)
	if max(l.strideH, lastH)*max(l.strideW, lastW) <= maxTileElems {
		return "offset_pool_tiles", top.Count()
	}
	return "offset_pool_backward", bottom.Count()
}
