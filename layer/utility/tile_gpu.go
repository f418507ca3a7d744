package utility

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/layer"
)

// tileGPU is Tile's GPU half.
type tileGPU[T layer.Float] struct{ l *tileLayer[T] }

func newTileGPU[T layer.Float](l *tileLayer[T]) layer.Engine[T] { return tileGPU[T]{l} }

// Forward tiles on the device.
func (e tileGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	g := l.GPU()
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Data(bottom[0])).Ptr(g.MutableData(top[0])).Int(l.inner).Int(l.tiles)
	return launch[T](l.Context(), "tile.cu", "tile_forward", n, &a)
}

// Backward sums the tiles' gradients on the device.
func (e tileGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if !propagateDown[0] {
		return nil
	}
	g := l.GPU()
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.Diff(top[0])).Ptr(g.MutableDiff(bottom[0])).Int(l.inner).Int(l.tiles)
	return launch[T](l.Context(), "tile.cu", "tile_backward", n, &a)
}
