package blob

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gocaffe/gocaffe/hdf5"
)

// FromHDF5 loads the blob from a dataset of integers or floats, converted
// to T (Caffe's hdf5_load_nd_dataset). With reshape the blob takes the
// dataset's shape; without, the shapes must be equal.
func (b *Blob[T]) FromHDF5(d *hdf5.Dataset, reshape bool) error {
	if c := d.Class(); c != hdf5.Integer && c != hdf5.Float {
		return fmt.Errorf("%s: dataset %s: unsupported datatype class %v (want integers or floats)", d.File(), d.Path(), c)
	}
	// What the file cannot hold is refused before the blob is sized for
	// it: a header may promise gigabytes that are not there.
	if err := d.CheckStorage(); err != nil {
		return err
	}
	shape := d.Shape()
	if reshape {
		if err := b.Reshape(shape); err != nil {
			return fmt.Errorf("%s: dataset %s: %w", d.File(), d.Path(), err)
		}
	} else if !slices.Equal(shape, b.shape) {
		return fmt.Errorf("%s: dataset %s: cannot load blob from hdf5; shape mismatch. Source shape is %s target shape is %s",
			d.File(), d.Path(), shapeString(shape), b.ShapeString())
	}
	return hdf5.ReadFloats(d, b.MutableCPUData())
}

// ToHDF5 adds the blob's data (or diff) to g as a dataset of its shape and
// element type (Caffe's hdf5_save_nd_dataset).
func (b *Blob[T]) ToHDF5(g *hdf5.WGroup, name string, writeDiff bool) error {
	v := b.CPUData()
	if writeDiff {
		v = b.CPUDiff()
	}
	return hdf5.CreateFloats(g, name, b.shape, v)
}

// shapeString renders dims as ShapeString does.
func shapeString(dims []int) string {
	var sb strings.Builder
	n := 1
	for _, d := range dims {
		sb.WriteString(strconv.Itoa(d))
		sb.WriteByte(' ')
		n *= d
	}
	return sb.String() + "(" + strconv.Itoa(n) + ")"
}
