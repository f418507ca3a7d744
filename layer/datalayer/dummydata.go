package datalayer

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/filler"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "DummyData",
		New32: newDummyData[float32], New64: newDummyData[float64],
		ONNX:     layer.ONNXInput,
		NoGolden: "it fills its tops from fillers, which Caffe draws in another order, which the golden nets do not",
	})
}

// DummyData produces tops filled by dummy_data_param.data_filler (none: a
// constant 0; one for every top; or one per top), shaped by
// dummy_data_param.shape (one for every top or one per top) or by the
// legacy num/channels/height/width lists. Tops with a constant filler are
// filled once, at setup; the others are refilled on every forward pass.
type dummyDataLayer[T layer.Float] struct {
	layer.Base[T]
	fillers []filler.Filler[T]
	refill  []bool // per filler: refill on every pass
}

func newDummyData[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &dummyDataLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "DummyData".
func (*dummyDataLayer[T]) Type() string { return "DummyData" }

// Counts returns no bottoms and one or more tops.
func (*dummyDataLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(0), Top: layer.AtLeast(1)}
}

// LayerSetUp shapes the tops, builds the fillers and fills the constant
// tops.
func (l *dummyDataLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if err := l.shapeTops(top); err != nil {
		return err
	}
	if err := l.makeFillers(len(top)); err != nil {
		return err
	}
	for i, t := range top {
		f := l.fillerIndex(i)
		if l.refill[f] {
			continue
		}
		if err := l.fillers[f].Fill(t, l.RNG()); err != nil {
			return fmt.Errorf("top %d: %w", i, err)
		}
	}
	return nil
}

// onceOrPerTop reports whether a repeated field of n values is given once
// or once per top.
func onceOrPerTop(n, nTop int) bool { return n == 1 || n == nTop }

// shapeTops shapes each top from the shape list or the legacy 4-D lists.
func (l *dummyDataLayer[T]) shapeTops(top []*blob.Blob[T]) error {
	dp := l.Param().GetDummyDataParam()
	legacy := [][]uint32{dp.GetNum(), dp.GetChannels(), dp.GetHeight(), dp.GetWidth()}
	if len(dp.GetNum())+len(dp.GetChannels())+len(dp.GetHeight())+len(dp.GetWidth()) == 0 {
		if !onceOrPerTop(len(dp.GetShape()), len(top)) {
			return fmt.Errorf("dummy_data_param.shape must be specified once, or once per top blob (%d); specified %d", len(top), len(dp.GetShape()))
		}
		for i, t := range top {
			if err := t.ReshapeProto(dp.GetShape()[min(i, len(dp.GetShape())-1)]); err != nil {
				return fmt.Errorf("top %d: %w", i, err)
			}
		}
		return nil
	}
	if len(dp.GetShape()) != 0 {
		return errors.New("dummy_data_param: both shape and the legacy num/channels/height/width fields were specified")
	}
	for j, name := range []string{"num", "channels", "height", "width"} {
		if !onceOrPerTop(len(legacy[j]), len(top)) {
			return fmt.Errorf("dummy_data_param.%s must be specified once, or once per top blob (%d); specified %d", name, len(top), len(legacy[j]))
		}
	}
	var dims [4]int
	for i, t := range top {
		for j, v := range legacy {
			dims[j] = int(v[min(i, len(v)-1)])
		}
		if err := t.Reshape(dims[:]); err != nil {
			return fmt.Errorf("top %d: %w", i, err)
		}
	}
	return nil
}

// makeFillers builds the fillers and decides which refill on every pass:
// all but the constant ones.
func (l *dummyDataLayer[T]) makeFillers(nTop int) error {
	params := l.Param().GetDummyDataParam().GetDataFiller()
	if len(params) > 1 && len(params) != nTop {
		return fmt.Errorf("number of data fillers must be 0, 1 or equal to the number of tops: %d; you specified %d data fillers", nTop, len(params))
	}
	if len(params) == 0 {
		params = []*caffepb.FillerParameter{{}} // Caffe's default filler: constant 0
	}
	l.fillers, l.refill = l.fillers[:0], l.refill[:0]
	for i, fp := range params {
		f, err := filler.New[T](fp)
		if err != nil {
			return fmt.Errorf("data_filler %d: %w", i, err)
		}
		l.fillers = append(l.fillers, f)
		l.refill = append(l.refill, fp.GetType() != "constant")
	}
	return nil
}

// fillerIndex is the filler of top i.
func (l *dummyDataLayer[T]) fillerIndex(i int) int {
	if len(l.fillers) == 1 {
		return 0
	}
	return i
}

// Reshape has nothing to do: the tops keep the shape set up.
func (*dummyDataLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error { return nil }

// ForwardCPU refills the tops whose filler is not constant.
func (l *dummyDataLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	for i, t := range top {
		f := l.fillerIndex(i)
		if !l.refill[f] {
			continue
		}
		if err := l.fillers[f].Fill(t, l.RNG()); err != nil {
			return fmt.Errorf("top %d: %w", i, err)
		}
	}
	return nil
}

// BackwardCPU has nothing to do: there are no bottoms.
func (*dummyDataLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
