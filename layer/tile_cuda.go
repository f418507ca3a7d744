//go:build cuda

package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// ForwardGPU tiles on the device.
func (l *Tile[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	g := gpuOf(&l.Base)
	n := top[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.data(bottom[0])).Ptr(g.mutableData(top[0])).Int(l.inner).Int(l.tiles)
	return launch[T](l.dev, "tile.cu", "tile_forward", n, &a)
}

// BackwardGPU sums the tiles' gradients on the device.
func (l *Tile[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	g := gpuOf(&l.Base)
	n := bottom[0].Count()
	var a cuda.Args
	a.Int(n).Ptr(g.diff(top[0])).Ptr(g.mutableDiff(bottom[0])).Int(l.inner).Int(l.tiles)
	return launch[T](l.dev, "tile.cu", "tile_backward", n, &a)
}
