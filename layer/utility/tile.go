package utility

import (
	"errors"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Tile",
		New32: newTile[float32], New64: newTile[float64],
		Engines:   []layer.EngineDef{layer.GPUEngine(newTileGPU[float32], newTileGPU[float64])},
		CUDAGraph: true,
		ONNX:      layer.ONNXConverted,
	})
}

// Tile repeats the bottom tile_param.tiles times along tile_param.axis
// (default 1): top shape(axis) = tiles * bottom shape(axis).
type tileLayer[T layer.Float] struct {
	layer.Base[T]
	tiles        int
	outer, inner int // count before axis; count from axis
	shape        []int
}

func newTile[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &tileLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	if tp := p.GetTileParam(); tp == nil || tp.Tiles == nil || tp.GetTiles() < 1 {
		return nil, errors.New("tile_param.tiles must be set and positive")
	}
	l.tiles = int(p.GetTileParam().GetTiles())
	return l, nil
}

// Type returns "Tile".
func (*tileLayer[T]) Type() string { return "Tile" }

// Counts returns one bottom and one top.
func (*tileLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// LayerSetUp has nothing to do.
func (*tileLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape sizes the top.
func (l *tileLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	axis, err := bottom[0].CanonicalAxisIndex(int(l.Param().GetTileParam().GetAxis()))
	if err != nil {
		return err
	}
	l.shape = append(l.shape[:0], bottom[0].Shape()...)
	l.shape[axis] *= l.tiles
	l.outer, l.inner = bottom[0].CountRange(0, axis), bottom[0].CountFrom(axis)
	return top[0].Reshape(l.shape)
}

// ForwardCPU copies each outer slice tiles times.
func (l *tileLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	x, y := bottom[0].CPUData(), top[0].MutableCPUData()
	for i := range l.outer {
		for t := range l.tiles {
			copy(y[(i*l.tiles+t)*l.inner:], x[i*l.inner:(i+1)*l.inner])
		}
	}
	return nil
}

// BackwardCPU sums the tiles' gradients.
func (l *tileLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	dy, dx := top[0].CPUDiff(), bottom[0].MutableCPUDiff()
	for i := range l.outer {
		d := dx[i*l.inner : (i+1)*l.inner]
		copy(d, dy[i*l.tiles*l.inner:])
		for t := 1; t < l.tiles; t++ {
			src := dy[(i*l.tiles+t)*l.inner:]
			for j := range d {
				d[j] += src[j]
			}
		}
	}
	return nil
}
