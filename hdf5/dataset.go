package hdf5

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// Class is a datatype class.
type Class int

// The datatype classes of HDF5 (H5T_class_t).
const (
	Integer Class = iota
	Float
	Time
	String
	Bitfield
	Opaque
	Compound
	Reference
	Enum
	VarLen
	Array
)

var classNames = []string{"INTEGER", "FLOAT", "TIME", "STRING", "BITFIELD", "OPAQUE", "COMPOUND", "REFERENCE", "ENUM", "VLEN", "ARRAY"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return "H5T_" + classNames[c]
	}
	return fmt.Sprintf("class %d", int(c))
}

// datatype is a decoded datatype message.
type datatype struct {
	class     Class
	size      int
	bigEndian bool
	signed    bool
}

func parseDatatype(b []byte) (datatype, error) {
	if len(b) < 8 {
		return datatype{}, errorString("short datatype message")
	}
	t := datatype{
		class:     Class(b[0] & 0x0f),
		size:      int(binary.LittleEndian.Uint32(b[4:])),
		bigEndian: b[1]&1 != 0,
		signed:    b[1]&0x08 != 0,
	}
	switch t.class {
	case Integer:
		if t.size != 1 && t.size != 2 && t.size != 4 && t.size != 8 {
			return t, errorString("integers of %d bytes are not supported", t.size)
		}
	case Float:
		if b[1]&0x40 != 0 {
			return t, errorString("VAX-order floats are not supported")
		}
		if t.size != 4 && t.size != 8 {
			return t, errorString("floats of %d bytes are not supported (only 4 and 8)", t.size)
		}
	case String:
		if t.size < 1 {
			return t, errorString("strings of %d bytes", t.size)
		}
	default:
		return t, errorString("datatype class %v is not supported", t.class)
	}
	return t, nil
}

// Dataset is a dataset of an open file.
type Dataset struct {
	f      *File
	path   string
	shape  []int
	dtype  datatype
	header *objectHeader
}

func (f *File) newDataset(path string, h *objectHeader) (*Dataset, error) {
	if h.isGroup() {
		return nil, f.errorf("%s is a group, not a dataset", path)
	}
	for _, typ := range h.shared {
		if typ == msgDatatype {
			return nil, f.errorf("dataset %s: committed (shared) datatypes are not supported", path)
		}
	}
	if h.dataspace == nil || h.datatype == nil || h.layout == nil {
		return nil, f.errorf("%s is not a dataset (no dataspace, datatype or layout)", path)
	}
	ds := &Dataset{f: f, path: path, header: h}
	var err error
	if ds.shape, err = parseDataspace(f, h.dataspace); err != nil {
		return nil, f.errorf("dataset %s: %v", path, err)
	}
	if ds.dtype, err = parseDatatype(h.datatype); err != nil {
		return nil, f.errorf("dataset %s: %v", path, err)
	}
	if _, ok := ds.bytes(); !ok {
		return nil, f.errorf("dataset %s: %v elements of %d bytes overflow a 64-bit size", path, ds.shape, ds.dtype.size)
	}
	return ds, nil
}

// bytes is the size of the dataset's elements in their stored type; ok is
// false when it does not fit an int (every dimension is below 2^31, but
// there may be 255 of them).
func (d *Dataset) bytes() (n int, ok bool) {
	n = 1
	for _, s := range d.shape {
		if s != 0 && n > math.MaxInt/s {
			return 0, false
		}
		n *= s
	}
	if size := d.dtype.size; size != 0 && n > math.MaxInt/size {
		return 0, false
	}
	return n * d.dtype.size, true
}

// parseDataspace returns the dimensions (none for a scalar).
func parseDataspace(f *File, b []byte) ([]int, error) {
	d := decoder{b: b, f: f}
	version := d.u8()
	rank := int(d.u8())
	d.u8() // flags
	switch version {
	case 1:
		d.skip(5)
	case 2:
		if typ := d.u8(); typ == 2 {
			return nil, errorString("null dataspace")
		}
	default:
		return nil, errorString("dataspace version %d is not supported", version)
	}
	shape := make([]int, rank)
	for i := range shape {
		v := d.length()
		if v > math.MaxInt32 {
			return nil, errorString("dimension %d is %d", i, v)
		}
		shape[i] = int(v)
	}
	if d.short {
		return nil, errorString("short dataspace message")
	}
	return shape, nil
}

// Path returns the dataset's path in its file.
func (d *Dataset) Path() string { return d.path }

// File returns the name of the dataset's file.
func (d *Dataset) File() string { return d.f.path }

// Shape returns the dataset's dimensions (none for a scalar).
func (d *Dataset) Shape() []int { return d.shape }

// Class returns the class of the dataset's elements.
func (d *Dataset) Class() Class { return d.dtype.class }

// ElementSize returns the size of one stored element in bytes.
func (d *Dataset) ElementSize() int { return d.dtype.size }

// Count returns the number of elements (which Open checked does not
// overflow an int).
func (d *Dataset) Count() int {
	n := 1
	for _, s := range d.shape {
		n *= s
	}
	return n
}

func (d *Dataset) errorf(format string, args ...any) error {
	return d.f.errorf("dataset %s: %s", d.path, fmt.Sprintf(format, args...))
}

// ReadFloats reads a numeric (integer or float) dataset into dst, which
// must hold Count elements, converting each element as libhdf5 converts to
// a native float or double.
func ReadFloats[T float32 | float64](d *Dataset, dst []T) error {
	if d.dtype.class != Integer && d.dtype.class != Float {
		return d.errorf("has datatype class %v; want integers or floats", d.dtype.class)
	}
	if len(dst) != d.Count() {
		return d.errorf("%d elements, destination holds %d", d.Count(), len(dst))
	}
	if l, err := d.parseLayout(); err == nil && l.neverWritten(len(dst)*d.dtype.size) {
		clear(dst) // the fill value, without a buffer of the stored type
		return nil
	}
	raw, err := d.raw()
	if err != nil {
		return err
	}
	convert(raw, d.dtype, dst)
	return nil
}

// ReadString reads a dataset of one fixed-length string (scalar or of one
// element), as Caffe's hdf5_load_string.
func (d *Dataset) ReadString() (string, error) {
	if d.dtype.class != String {
		return "", d.errorf("has datatype class %v; want a string", d.dtype.class)
	}
	if d.Count() != 1 {
		return "", d.errorf("holds %d strings; want 1", d.Count())
	}
	raw, err := d.raw()
	if err != nil {
		return "", err
	}
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		raw = raw[:i]
	}
	return string(bytes.TrimRight(raw, " ")), nil
}

// convert decodes raw elements of type t into dst.
func convert[T float32 | float64](raw []byte, t datatype, dst []T) {
	var order binary.ByteOrder = binary.LittleEndian
	if t.bigEndian {
		order = binary.BigEndian
	}
	n := t.size
	for i := range dst {
		e := raw[i*n : i*n+n]
		switch {
		case t.class == Float && n == 4:
			dst[i] = T(math.Float32frombits(order.Uint32(e)))
		case t.class == Float:
			dst[i] = T(math.Float64frombits(order.Uint64(e)))
		case t.signed:
			dst[i] = T(signExtend(readUint(order, e), n))
		default:
			dst[i] = T(readUint(order, e))
		}
	}
}

func readUint(order binary.ByteOrder, e []byte) uint64 {
	switch len(e) {
	case 1:
		return uint64(e[0])
	case 2:
		return uint64(order.Uint16(e))
	case 4:
		return uint64(order.Uint32(e))
	}
	return order.Uint64(e)
}

func signExtend(v uint64, size int) int64 {
	shift := 64 - 8*size
	return int64(v<<shift) >> shift
}

// errorString is fmt.Errorf under a shorter name, for messages the caller
// prefixes with file and dataset.
func errorString(format string, args ...any) error { return fmt.Errorf(format, args...) }
