package datalayer

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/hdf5"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "HDF5Output",
		New32: newHDF5Output[float32], New64: newHDF5Output[float64],
		ONNXWhy:  "writes files",
		NoGolden: "it writes HDF5 files, which the golden nets do not",
	})
}

// HDF5Output writes its two bottoms to hdf5_output_param.file_name as the
// datasets "data" and "label", in Caffe's legacy 4-D shape (num, channels,
// height, width) (Caffe's HDF5OutputLayer). The file is created at setup.
//
// Caffe writes one forward pass's batch and fails on the next (the
// datasets exist); gocaffe instead appends every pass's rows to the
// datasets, logging a warning the first time. The datasets are chunked
// and resizable along the rows (hdf5.Appender), so a pass writes its own
// rows and a little metadata: time and memory do not grow with the passes
// before it (rewriting the whole file each pass took 257 s and 3.8 GB for
// 200 passes of 1 MB). Close (Net.Close) flushes the file to disk.
type hdf5OutputLayer[T layer.Float] struct {
	layer.Base[T]
	file     string
	out      *hdf5.Appender // from the first pass on
	rowShape [2][]int       // channels, height, width of each bottom
	warned   bool
}

func newHDF5Output[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &hdf5OutputLayer[T]{file: p.GetHdf5OutputParam().GetFileName()}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	if l.file == "" {
		return nil, errors.New("hdf5_output_param.file_name is not set")
	}
	return l, nil
}

// Type returns "HDF5Output".
func (*hdf5OutputLayer[T]) Type() string { return "HDF5Output" }

// Counts returns two bottoms (data and label) and no tops.
func (*hdf5OutputLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(2), Top: layer.Exactly(0)}
}

// LayerSetUp creates the (empty) output file; its datasets are made at the
// first pass, which fixes their rows' shapes.
func (l *hdf5OutputLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if err := l.Close(); err != nil {
		return err
	}
	if err := protoio.WriteFileAtomic(l.file, hdf5.NewBuilder().Bytes()); err != nil {
		return fmt.Errorf("failed to open HDF5 file %s: %w", l.file, err)
	}
	return nil
}

// Reshape checks that both bottoms have the same number of rows and at most
// 4 axes.
func (l *hdf5OutputLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	for i, b := range bottom {
		if b.NumAxes() > 4 {
			return fmt.Errorf("bottom %d has %d axes; HDF5Output writes Caffe's legacy 4-D blobs", i, b.NumAxes())
		}
	}
	if n0, n1 := legacyDim(bottom[0], 0), legacyDim(bottom[1], 0); n0 != n1 {
		return fmt.Errorf("data blob and label blob must have the same batch size: %d and %d", n0, n1)
	}
	return nil
}

// legacyDim is Caffe's LegacyShape(i): 1 past the blob's axes.
func legacyDim[T layer.Float](b *blob.Blob[T], i int) int {
	if i < b.NumAxes() {
		return b.Shape()[i]
	}
	return 1
}

// ForwardCPU appends the batch to the file.
func (l *hdf5OutputLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	for i, b := range bottom {
		shape := []int{legacyDim(b, 1), legacyDim(b, 2), legacyDim(b, 3)}
		if l.out != nil && !slices.Equal(shape, l.rowShape[i]) {
			return fmt.Errorf("bottom %d rows changed shape from %v to %v between passes", i, l.rowShape[i], shape)
		}
		l.rowShape[i] = shape
	}
	if err := l.open(legacyDim(bottom[0], 0)); err != nil {
		return err
	}
	logf.Infof(l.Logger(), "Saving HDF5 file %s", l.file)
	if err := hdf5.AppendFloats(l.out, bottom[0].CPUData(), bottom[1].CPUData()); err != nil {
		return err
	}
	logf.Infof(l.Logger(), "Successfully saved %d rows", l.out.Rows(0))
	return nil
}

// open makes the file's datasets at the first pass, their chunks sized
// for batches of batch rows, and warns at the second, where Caffe fails.
func (l *hdf5OutputLayer[T]) open(batch int) error {
	if l.out != nil {
		if !l.warned {
			logf.Warnf(l.Logger(), "HDF5Output %s: a second forward pass; Caffe would fail here (its datasets exist), gocaffe appends the rows to %s", l.Name(), l.file)
			l.warned = true
		}
		return nil
	}
	var zero T
	_, wide := any(zero).(float64)
	out, err := hdf5.CreateAppender(l.file, []hdf5.GrowingDataset{
		{Name: "data", RowShape: l.rowShape[0], Float64: wide, ChunkRows: batch},
		{Name: "label", RowShape: l.rowShape[1], Float64: wide, ChunkRows: batch},
	})
	if err != nil {
		return fmt.Errorf("failed to open HDF5 file %s: %w", l.file, err)
	}
	l.out = out
	return nil
}

// Close flushes the file to disk and closes it (Net.Close calls it).
func (l *hdf5OutputLayer[T]) Close() error {
	if l.out == nil {
		return nil
	}
	err := l.out.Close()
	l.out = nil
	return err
}

// BackwardCPU does nothing.
func (*hdf5OutputLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
