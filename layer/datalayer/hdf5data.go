package datalayer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/hdf5"
	"github.com/gocaffe/gocaffe/internal/fileio"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "HDF5Data",
		New32: newHDF5Data[float32], New64: newHDF5Data[float64],
		ONNX:     layer.ONNXInput,
		NoGolden: "it reads HDF5 files, which the golden nets do not",
	})
}

// HDF5Data serves rows of HDF5 datasets (Caffe's HDF5DataLayer).
// hdf5_data_param.source is a text file listing .h5 files (whitespace
// separated; a relative name that does not exist from the working
// directory is also looked for next to the list); each top is the dataset
// of its name in every file, integers or floats of at least one dimension,
// all with the same number of rows (first dimension). Files are loaded
// whole, one at a time, and served batch_size rows per forward pass, in
// order or, with shuffle, in an order reshuffled every pass over a file
// (and the files' order every pass over the list).
type hdf5DataLayer[T layer.Float] struct {
	layer.Base[T]
	files    []string
	filePerm []int
	file     int // index into filePerm
	data     []*blob.Blob[T]
	rowPerm  []int
	row      int
	rowShape [][]int // per top, the shape of one row (from the first file)
}

func newHDF5Data[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &hdf5DataLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	if p.TransformParam != nil {
		return nil, errors.New("HDF5Data does not transform data: remove transform_param")
	}
	if p.GetHdf5DataParam().GetBatchSize() == 0 {
		return nil, errors.New("hdf5_data_param.batch_size must be positive")
	}
	return l, nil
}

// Type returns "HDF5Data".
func (*hdf5DataLayer[T]) Type() string { return "HDF5Data" }

// Counts returns no bottoms and one or more tops.
func (*hdf5DataLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(0), Top: layer.AtLeast(1)}
}

// LayerSetUp reads the file list, loads the first file and shapes the tops:
// batch_size rows of each dataset's row shape.
func (l *hdf5DataLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	hp := l.Param().GetHdf5DataParam()
	files, err := readFileList(hp.GetSource())
	if err != nil {
		return err
	}
	l.files = files
	logf.Debugf(l.Logger(), "Number of HDF5 files: %d", len(files))
	l.filePerm = make([]int, len(files))
	for i := range l.filePerm {
		l.filePerm[i] = i
	}
	if hp.GetShuffle() {
		l.shuffle(l.filePerm)
	}
	l.file, l.rowShape = 0, nil
	if err := l.load(); err != nil {
		return err
	}
	for i, t := range top {
		if err := t.Reshape(append([]int{int(hp.GetBatchSize())}, l.rowShape[i]...)); err != nil {
			return fmt.Errorf("top %d: %w", i, err)
		}
	}
	return nil
}

// readFileList reads the whitespace-separated file names of an HDF5Data
// source list.
func readFileList(source string) ([]string, error) {
	b, err := fileio.ReadFile(source, fileio.ProtoLimit)
	if err != nil {
		return nil, fmt.Errorf("failed to open source file: %w", err)
	}
	names := strings.Fields(string(b))
	if len(names) == 0 {
		return nil, fmt.Errorf("must have at least 1 HDF5 filename listed in %s", source)
	}
	for i, n := range names {
		if _, err := os.Stat(n); err != nil && !filepath.IsAbs(n) {
			if alt := filepath.Join(filepath.Dir(source), n); fileExists(alt) {
				names[i] = alt
			}
		}
	}
	return names, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// shuffle permutes p with the layer's random number generator.
func (l *hdf5DataLayer[T]) shuffle(p []int) {
	l.RNG().Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
}

// load reads every top's dataset from the current file and checks that
// they have the same rows, of the shape the tops were given.
func (l *hdf5DataLayer[T]) load() error {
	path := l.files[l.filePerm[l.file]]
	f, err := hdf5.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tops := l.Param().GetTop()
	data := make([]*blob.Blob[T], len(tops))
	for i, name := range tops {
		d, err := f.OpenDataset(name)
		if err != nil {
			return err
		}
		if len(d.Shape()) < 1 {
			return fmt.Errorf("%s: dataset %s is a scalar; HDF5Data needs at least 1 axis (rows)", path, d.Path())
		}
		b, err := blob.New[T]()
		if err != nil {
			return err
		}
		if err := b.FromHDF5(d, true); err != nil {
			return err
		}
		if i > 0 && b.Shape()[0] != data[0].Shape()[0] {
			return fmt.Errorf("%s: dataset %s has %d rows (first dimension), dataset /%s has %d: every top's dataset needs the same number",
				path, d.Path(), b.Shape()[0], tops[0], data[0].Shape()[0])
		}
		if l.rowShape != nil && !slices.Equal(b.Shape()[1:], l.rowShape[i]) {
			return fmt.Errorf("%s: dataset %s has rows of shape %v, the first file's have %v", path, d.Path(), b.Shape()[1:], l.rowShape[i])
		}
		data[i] = b
	}
	if l.rowShape == nil {
		for _, b := range data {
			l.rowShape = append(l.rowShape, slices.Clone(b.Shape()[1:]))
		}
	}
	l.data = data
	rows := data[0].Shape()[0]
	if rows == 0 {
		return fmt.Errorf("%s: dataset /%s has no rows", path, tops[0])
	}
	l.rowPerm = l.rowPerm[:0]
	for i := range rows {
		l.rowPerm = append(l.rowPerm, i)
	}
	if l.Param().GetHdf5DataParam().GetShuffle() {
		l.shuffle(l.rowPerm)
	}
	l.row = 0
	return nil
}

// Reshape does nothing: the tops keep the shape LayerSetUp gave them.
func (*hdf5DataLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error { return nil }

// ForwardCPU copies the next batch_size rows into the tops.
func (l *hdf5DataLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	batch := int(l.Param().GetHdf5DataParam().GetBatchSize())
	for i := range batch {
		for j, t := range top {
			n := t.Count() / batch
			src := l.data[j].CPUData()
			r := l.rowPerm[l.row]
			copy(t.MutableCPUData()[i*n:(i+1)*n], src[r*n:(r+1)*n])
		}
		if err := l.next(); err != nil {
			return err
		}
	}
	return nil
}

// next moves to the next row, loading the next file after the last row.
func (l *hdf5DataLayer[T]) next() error {
	if l.row++; l.row < len(l.rowPerm) {
		return nil
	}
	if len(l.files) > 1 {
		if l.file++; l.file == len(l.files) {
			l.file = 0
			if l.Param().GetHdf5DataParam().GetShuffle() {
				l.shuffle(l.filePerm)
			}
		}
		return l.load()
	}
	l.row = 0
	if l.Param().GetHdf5DataParam().GetShuffle() {
		l.shuffle(l.rowPerm)
	}
	return nil
}

// BackwardCPU does nothing: data layers take no gradient.
func (*hdf5DataLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}
