package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/gocaffe/gocaffe/internal/fileio"
)

// IDX element types, the third byte of an IDX file's magic number.
const (
	IDXUint8   byte = 0x08
	IDXInt8    byte = 0x09
	IDXInt16   byte = 0x0B
	IDXInt32   byte = 0x0C
	IDXFloat32 byte = 0x0D
	IDXFloat64 byte = 0x0E
)

// idxElemSize is the size in bytes of one value of each IDX element type.
var idxElemSize = map[byte]int{
	IDXUint8: 1, IDXInt8: 1, IDXInt16: 2, IDXInt32: 4, IDXFloat32: 4, IDXFloat64: 8,
}

// Limits that keep a damaged or hostile header from making the reader
// allocate absurd buffers or overflow sizes: an IDX file that really held
// more than this would not be an MNIST-like data set.
const (
	idxMaxDims     = 16
	idxMaxItemSize = 1 << 30
	idxMaxTotal    = 1 << 50
)

// IDXFile reads an IDX file, the format of MNIST and Fashion-MNIST: a
// big-endian magic number (two zero bytes, the element type, the number of
// dimensions), one big-endian uint32 per dimension, then the values in
// row-major order. The first dimension counts items; ReadItem returns them
// one at a time as raw bytes.
//
// Files compressed with gzip (as Fashion-MNIST and Debian's
// dataset-fashion-mnist ship them) are recognised by their magic bytes and
// decompressed on the fly, so they need not be unpacked first.
type IDXFile struct {
	// Name is the file's path (or the name given to NewIDXReader), used in
	// errors.
	Name string
	// Magic is the header's magic number, e.g. 2051 (0x00000803) for MNIST
	// images and 2049 (0x00000801) for labels.
	Magic uint32
	// Type is the element type (IDXUint8, ...).
	Type byte
	// Dims are the dimensions; Dims[0] is the number of items.
	Dims []int

	r        io.Reader
	closers  []io.Closer
	gz       *gzip.Reader
	itemSize int
	next     int
}

// OpenIDX opens the IDX file at path, gzip-compressed or not, and reads
// its header. For an uncompressed file a size too small for the header's
// item count is reported at once, before any item is read.
func OpenIDX(path string) (*IDXFile, error) {
	f, _, err := fileio.Open(path, fileio.NoLimit)
	if err != nil {
		return nil, err
	}
	x, err := newIDX(f, path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	if x.gz == nil {
		// The payload size of a plain file is known from the header, so a
		// truncated download is caught here rather than after converting
		// most of it.
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			want := int64(x.HeaderSize()) + int64(x.Count())*int64(x.itemSize)
			if st.Size() < want {
				f.Close()
				return nil, fmt.Errorf("IDX file %s is truncated: its header promises %d items of %d bytes (%d bytes with the header) but the file holds %d bytes",
					path, x.Count(), x.itemSize, want, st.Size())
			}
		}
	}
	return x, nil
}

// NewIDXReader reads an IDX header from r (gzip-compressed or not); name
// identifies the source in errors. Closing the IDXFile does not close r.
func NewIDXReader(r io.Reader, name string) (*IDXFile, error) {
	return newIDX(r, name, nil)
}

func newIDX(r io.Reader, name string, closer io.Closer) (*IDXFile, error) {
	x := &IDXFile{Name: name}
	if closer != nil {
		x.closers = append(x.closers, closer)
	}
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("IDX file %s: looks gzip-compressed but its gzip header is damaged: %w", name, err)
		}
		x.gz = gz
		x.closers = append(x.closers, gz)
		br = bufio.NewReaderSize(gz, 1<<16)
	}
	x.r = br

	var head [4]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return nil, fmt.Errorf("IDX file %s: reading the 4-byte magic number: %w", name, eofIsUnexpected(err))
	}
	x.Magic = binary.BigEndian.Uint32(head[:])
	if head[0] != 0 || head[1] != 0 {
		return nil, fmt.Errorf("IDX file %s is not an IDX file: it starts with bytes % x, want 00 00 <type> <dimensions>", name, head[:])
	}
	x.Type = head[2]
	elem, ok := idxElemSize[x.Type]
	if !ok {
		return nil, fmt.Errorf("IDX file %s: unknown element type 0x%02x in magic number 0x%08x (want 0x08, 0x09, 0x0b, 0x0c, 0x0d or 0x0e)", name, x.Type, x.Magic)
	}
	nd := int(head[3])
	if nd == 0 || nd > idxMaxDims {
		return nil, fmt.Errorf("IDX file %s: magic number 0x%08x gives %d dimensions, want 1 to %d", name, x.Magic, nd, idxMaxDims)
	}
	dims := make([]byte, 4*nd)
	if _, err := io.ReadFull(br, dims); err != nil {
		return nil, fmt.Errorf("IDX file %s: reading the %d dimension sizes of the header: %w", name, nd, eofIsUnexpected(err))
	}
	x.Dims = make([]int, nd)
	itemSize := elem
	for i := range nd {
		d := binary.BigEndian.Uint32(dims[4*i:])
		x.Dims[i] = int(d)
		if i == 0 {
			continue
		}
		if d == 0 {
			return nil, fmt.Errorf("IDX file %s: dimension %d has size 0", name, i)
		}
		itemSize *= int(d)
		if itemSize > idxMaxItemSize {
			return nil, fmt.Errorf("IDX file %s: items of dimensions %v are over %d bytes each: the header is damaged", name, x.Dims[1:], idxMaxItemSize)
		}
	}
	if int64(x.Dims[0])*int64(itemSize) > idxMaxTotal {
		return nil, fmt.Errorf("IDX file %s: %d items of %d bytes is over %d bytes: the header is damaged", name, x.Dims[0], itemSize, int64(idxMaxTotal))
	}
	x.itemSize = itemSize
	return x, nil
}

// Count returns the number of items (the first dimension).
func (x *IDXFile) Count() int { return x.Dims[0] }

// ItemSize returns the size in bytes of one item: the product of the
// dimensions after the first times the element size.
func (x *IDXFile) ItemSize() int { return x.itemSize }

// HeaderSize returns the header's size in bytes (in the uncompressed
// stream).
func (x *IDXFile) HeaderSize() int { return 4 + 4*len(x.Dims) }

// Compressed reports whether the file is gzip-compressed.
func (x *IDXFile) Compressed() bool { return x.gz != nil }

// ReadItem reads the next item into buf, which must hold ItemSize bytes.
// Past the last item it returns io.EOF. A file that ends early gives an
// error naming the file, the item and the bytes expected.
func (x *IDXFile) ReadItem(buf []byte) error {
	if len(buf) != x.itemSize {
		return fmt.Errorf("IDX file %s: reading an item of %d bytes into a buffer of %d", x.Name, x.itemSize, len(buf))
	}
	if x.next >= x.Count() {
		return io.EOF
	}
	n, err := io.ReadFull(x.r, buf)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("IDX file %s is truncated: item %d of %d ends after %d of its %d bytes (byte %d of the uncompressed data)",
				x.Name, x.next, x.Count(), n, x.itemSize, int64(x.HeaderSize())+int64(x.next)*int64(x.itemSize)+int64(n))
		}
		return fmt.Errorf("IDX file %s: reading item %d of %d: %w", x.Name, x.next, x.Count(), err)
	}
	x.next++
	if x.next == x.Count() && x.gz != nil {
		// gzip checks its CRC and length trailer only when the stream is
		// read to its end; do it now so a damaged archive is an error
		// rather than silently wrong data.
		if _, err := io.Copy(io.Discard, x.r); err != nil {
			return fmt.Errorf("IDX file %s: after the last item: the gzip stream is damaged: %w", x.Name, err)
		}
	}
	return nil
}

// Close releases the file.
func (x *IDXFile) Close() error {
	var first error
	for i := len(x.closers) - 1; i >= 0; i-- {
		if err := x.closers[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	x.closers = nil
	return first
}

func eofIsUnexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("the file ends there: %w", io.ErrUnexpectedEOF)
	}
	return err
}
