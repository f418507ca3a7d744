package datalayer

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "MemoryData",
		New32: newMemoryData[float32], New64: newMemoryData[float64],
		ONNX:     layer.ONNXInput,
		NoGolden: "it reads arrays the program hands it, which the golden nets do not",
	})
}

// MemoryData serves data that the program hands it through Reset (Caffe's
// MemoryDataLayer): n items of channels x height x width values and n
// labels, n a multiple of memory_data_param.batch_size. Each Forward
// copies the next batch_size items and labels into the tops, going back to
// the first item after the last. No transformation is applied.
//
// The layer keeps the slices given to Reset (it does not copy them) until
// the next Reset, as Caffe keeps the pointers; Forward copies each batch
// into the tops' own memory, so later layers never write into the caller's
// arrays.
type MemoryData[T layer.Float] struct {
	layer.Base[T]
	batch, size  int    // items per batch, values per item
	shape        [4]int // of the data top
	labelShape   [4]int // of the label top in Forward
	data, labels []T
	n, pos       int // items in data, index of the next batch's first item
}

func newMemoryData[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &MemoryData[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	return l, nil
}

// Type returns "MemoryData".
func (*MemoryData[T]) Type() string { return "MemoryData" }

// Counts returns no bottoms and two tops (data, labels).
func (*MemoryData[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(0), Top: layer.Exactly(2)}
}

// LayerSetUp reads the batch shape and shapes the tops.
func (l *MemoryData[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	mp := l.Param().GetMemoryDataParam()
	l.shape = [4]int{int(mp.GetBatchSize()), int(mp.GetChannels()), int(mp.GetHeight()), int(mp.GetWidth())}
	l.labelShape = [4]int{l.shape[0], 1, 1, 1}
	l.batch, l.size = l.shape[0], l.shape[1]*l.shape[2]*l.shape[3]
	if l.batch*l.size <= 0 {
		return errors.New("batch_size, channels, height, and width must be specified and positive in memory_data_param")
	}
	if err := top[0].Reshape(l.shape[:]); err != nil {
		return err
	}
	return top[1].Reshape([]int{l.batch})
}

// Reset hands the layer n items (data holds n*channels*height*width
// values, labels n values) and restarts from the first. n must be a
// positive multiple of the batch size.
func (l *MemoryData[T]) Reset(data, labels []T, n int) error {
	if l.batch == 0 {
		return fmt.Errorf("layer %q (MemoryData): Reset before SetUp", l.Name())
	}
	switch {
	case n <= 0 || n%l.batch != 0:
		return fmt.Errorf("layer %q (MemoryData): n must be a positive multiple of batch size %d, got %d", l.Name(), l.batch, n)
	case len(data) < n*l.size:
		return fmt.Errorf("layer %q (MemoryData): %d items of %d values need %d data values, got %d", l.Name(), n, l.size, n*l.size, len(data))
	case len(labels) < n:
		return fmt.Errorf("layer %q (MemoryData): %d items need %d labels, got %d", l.Name(), n, n, len(labels))
	}
	if l.Param().TransformParam != nil {
		logf.Warnf(l.Logger(), "MemoryData does not transform array data on Reset()")
	}
	l.data, l.labels, l.n, l.pos = data[:n*l.size], labels[:n], n, 0
	return nil
}

// Reshape has nothing to do: Forward shapes the tops.
func (*MemoryData[T]) Reshape(bottom, top []*blob.Blob[T]) error { return nil }

// ForwardCPU copies the next batch into the tops. Like Caffe it shapes the
// label top batch_size x 1 x 1 x 1 here (batch_size at setup).
func (l *MemoryData[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if l.data == nil {
		return errors.New("MemoryData needs to be initialized by calling Reset")
	}
	if err := top[0].Reshape(l.shape[:]); err != nil {
		return err
	}
	if err := top[1].Reshape(l.labelShape[:]); err != nil { // a field: a literal would escape
		return err
	}
	copy(top[0].MutableCPUData(), l.data[l.pos*l.size:(l.pos+l.batch)*l.size])
	copy(top[1].MutableCPUData(), l.labels[l.pos:l.pos+l.batch])
	l.pos = (l.pos + l.batch) % l.n
	return nil
}

// BackwardCPU has nothing to do: data layers have no bottoms.
func (*MemoryData[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
