package main

import (
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// The magic numbers of MNIST's IDX files: unsigned bytes (0x08) in three
// dimensions (items, rows, columns) for images, one dimension for labels.
const (
	mnistImagesMagic = 0x00000803 // 2051
	mnistLabelsMagic = 0x00000801 // 2049
)

// runConvertMNIST converts MNIST-format IDX files (MNIST, Fashion-MNIST)
// into a database of Datums, as Caffe's examples/mnist/convert_mnist_data.
func runConvertMNIST(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("convert_mnist_data", stderr)
	backendName := fs.String("backend", "lmdb", "the database backend to write: lmdb or leveldb")
	setUsage(fs, stderr, "gocaffe convert_mnist_data [-backend lmdb|leveldb] IMAGES LABELS DB",
		"Converts MNIST-format IDX files (plain or gzip-compressed) into a database of\n"+
			"1xROWSxCOLS Datums of raw bytes with keys %08d, as Caffe's convert_mnist_data.")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 3 {
		return usageError(fs, stderr, "want 3 arguments (images file, labels file, database), got %d", len(pos))
	}
	backend, err := parseBackendFlag(*backendName)
	if err != nil {
		return err
	}
	_, err = convertMNIST(pos[0], pos[1], pos[2], backend, stderr)
	return err
}

// convertMNIST writes the images and labels into a new database and
// returns the number of records written.
func convertMNIST(imagesPath, labelsPath, dbPath string, backend caffepb.DataParameter_DB, stderr io.Writer) (n int, err error) {
	images, err := openMNIST(imagesPath, "images", mnistImagesMagic, "labels", mnistLabelsMagic)
	if err != nil {
		return 0, err
	}
	defer images.Close()
	labels, err := openMNIST(labelsPath, "labels", mnistLabelsMagic, "images", mnistImagesMagic)
	if err != nil {
		return 0, err
	}
	defer labels.Close()
	if images.Count() != labels.Count() {
		return 0, fmt.Errorf("images file %s holds %d items but labels file %s holds %d: want one label per image",
			imagesPath, images.Count(), labelsPath, labels.Count())
	}
	rows, cols := images.Dims[1], images.Dims[2]

	db, err := createDB(backend, dbPath)
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			db.abort()
		}
	}()
	total := images.Count()
	glog.Infof("A total of %d items.", total)
	glog.Infof("Rows: %d Cols: %d", rows, cols)
	rep, stop := startProgress(stderr, "convert_mnist_data", "images", total)
	defer stop()

	pixels := make([]byte, images.ItemSize())
	label := make([]byte, 1)
	datum := &caffepb.Datum{Channels: proto.Int32(1), Height: proto.Int32(int32(rows)), Width: proto.Int32(int32(cols))}
	var key, value []byte
	for i := range total {
		if err := images.ReadItem(pixels); err != nil {
			return i, err
		}
		if err := labels.ReadItem(label); err != nil {
			return i, err
		}
		datum.Data = pixels
		datum.Label = proto.Int32(int32(label[0]))
		if value, err = (proto.MarshalOptions{}).MarshalAppend(value[:0], datum); err != nil {
			return i, fmt.Errorf("encoding record %d: %w", i, err)
		}
		key = fmt.Appendf(key[:0], "%08d", i)
		if err := db.put(key, value); err != nil {
			return i, err
		}
		rep.Add(1)
	}
	if err := db.finish(); err != nil {
		return total, err
	}
	rep.Finish()
	return total, nil
}

// openMNIST opens an IDX file and checks its magic number; a file with
// the other kind's magic number gets a hint that the two were swapped.
func openMNIST(path, kind string, magic uint32, otherKind string, otherMagic uint32) (*data.IDXFile, error) {
	f, err := data.OpenIDX(path)
	if err != nil {
		return nil, fmt.Errorf("%s file: %w", kind, err)
	}
	if f.Magic != magic {
		f.Close()
		hint := ""
		if f.Magic == otherMagic {
			hint = fmt.Sprintf(" (that of a %s file: are the images and labels arguments swapped?)", otherKind)
		}
		return nil, fmt.Errorf("%s file %s: incorrect magic number %d (0x%08x)%s, want %d (0x%08x)",
			kind, path, f.Magic, f.Magic, hint, magic, magic)
	}
	return f, nil
}
