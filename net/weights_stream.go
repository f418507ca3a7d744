package net

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/fileio"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Reading a .caffemodel straight into the net's blobs.
//
// Decoding the whole NetParameter holds the file's bytes and the decoded
// values at once beside the blobs they are copied into: three times the
// weights (a deploy ResNet-50's 102 MB file took its resident peak past
// 310 MB while loading, more than it needs to run). copyStreamed instead
// reads the file twice, holding only small parts of it: a first pass
// walks its wire format and keeps each layer's name and each blob's shape
// fields, and where in the file its values lie; after every blob is
// matched and checked as CopyTrainedLayersFrom checks them (nothing is
// written before), a second pass reads the values into the blobs, a
// megabyte at a time.
//
// It takes files of the current format only: a NetParameter whose layers
// are in `layer` (field 100) and whose blobs hold their values in data,
// diff, double_data or double_diff, packed, as every Caffe writes them.
// Anything else (V0 and V1 `layers`, which need upgrading, NVCaffe's
// raw_data, values not packed, a malformed file) is left to the decoding
// path, which handles and reports it as before.

// Field numbers of caffe.proto.
const (
	fieldNetLayer     = 100 // NetParameter.layer
	fieldNetLayersV1  = 2   // NetParameter.layers (V0/V1)
	fieldLayerName    = 1   // LayerParameter.name
	fieldLayerBlobs   = 7   // LayerParameter.blobs
	fieldBlobData     = 5   // BlobProto.data
	fieldBlobDiff     = 6   // BlobProto.diff
	fieldBlobDData    = 8   // BlobProto.double_data
	fieldBlobDDiff    = 9   // BlobProto.double_diff
	fieldBlobRawData  = 12  // BlobProto.raw_data
	fieldBlobRawDiff  = 13  // BlobProto.raw_diff
	streamChunkBytes  = 1 << 20
	streamHeaderLimit = 1 << 20 // a blob's fields other than its values: its shape
	// streamIndexLimit bounds the first pass's index (an estimate of its
	// memory: a few hundred bytes a layer and a blob): a real net's is
	// tens of kilobytes; a file of millions of empty layers is left to
	// the decoding path, which sizes it before it decodes and refuses
	// what would not fit.
	streamIndexLimit = 16 << 20
)

// errNotStreamed says a file is not one copyStreamed takes: the decoding
// path reads it.
var errNotStreamed = errors.New("not a caffemodel of the current format with packed values")

// span is a run of bytes of the file.
type span struct{ off, n int64 }

// streamBlob is a blob of the file: its fields other than the values
// (decoded: the shape), and where the packed values of each kind lie (a
// packed field may come in several runs, which concatenate).
type streamBlob struct {
	header                   *caffepb.BlobProto
	data, diff, ddata, ddiff []span
}

// streamLayer is a layer of the file.
type streamLayer struct {
	name  string
	blobs []streamBlob
}

// wireReader reads a file's wire format in sequence, counting its offset.
type wireReader struct {
	f   *os.File
	r   *bufio.Reader
	off int64
	// index is the first pass's estimate of its index's bytes so far
	// (streamIndexLimit).
	index int
}

func (w *wireReader) ReadByte() (byte, error) {
	b, err := w.r.ReadByte()
	if err == nil {
		w.off++
	}
	return b, err
}

func (w *wireReader) uvarint() (uint64, error) { return binary.ReadUvarint(w) }

// skip passes n bytes: within the buffer by discarding, beyond it by
// seeking (the values the first pass does not read).
func (w *wireReader) skip(n int64) error {
	if n <= int64(w.r.Buffered()) {
		_, err := w.r.Discard(int(n))
		w.off += n
		return err
	}
	w.off += n
	if _, err := w.f.Seek(w.off, io.SeekStart); err != nil {
		return err
	}
	w.r.Reset(w.f)
	return nil
}

func (w *wireReader) read(n int64) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(w.r, b)
	w.off += n
	return b, err
}

// field reads a field's tag and then, for a length-delimited field, its
// length (checked against end: the rest is the caller's to read or skip),
// or the value of another (a varint, or fixed32 or fixed64 bits).
func (w *wireReader) field(end int64) (num protowire.Number, typ protowire.Type, v uint64, err error) {
	tag, err := w.uvarint()
	if err != nil {
		return 0, 0, 0, err
	}
	num, typ = protowire.DecodeTag(tag)
	if num <= 0 {
		return 0, 0, 0, errNotStreamed
	}
	switch typ {
	case protowire.VarintType:
		v, err = w.uvarint()
	case protowire.Fixed32Type:
		var b [4]byte
		_, err = io.ReadFull(w.r, b[:])
		w.off += 4
		v = uint64(binary.LittleEndian.Uint32(b[:]))
	case protowire.Fixed64Type:
		var b [8]byte
		_, err = io.ReadFull(w.r, b[:])
		w.off += 8
		v = binary.LittleEndian.Uint64(b[:])
	case protowire.BytesType:
		if v, err = w.uvarint(); err == nil && v > uint64(end-w.off) {
			err = errNotStreamed
		}
	default:
		err = errNotStreamed // groups: not in caffe.proto
	}
	if err == nil && w.off > end {
		err = errNotStreamed
	}
	return num, typ, v, err
}

// indexModel is the first pass: the layers of the file.
func indexModel(f *os.File, size int64) ([]streamLayer, error) {
	w := &wireReader{f: f, r: bufio.NewReaderSize(f, streamChunkBytes)}
	var layers []streamLayer
	for w.off < size {
		num, typ, v, err := w.field(size)
		if err != nil {
			return nil, err
		}
		n := int64(v)
		switch {
		case num == fieldNetLayersV1:
			return nil, errNotStreamed // to be upgraded
		case num == fieldNetLayer && typ == protowire.BytesType:
			l, err := w.layer(w.off + n)
			if err != nil {
				return nil, err
			}
			layers = append(layers, l)
			if w.index += 100 + len(l.name); w.index > streamIndexLimit {
				return nil, errNotStreamed
			}
		case num == fieldNetLayer:
			return nil, errNotStreamed
		case typ == protowire.BytesType:
			if err := w.skip(n); err != nil {
				return nil, err
			}
		}
	}
	return layers, nil
}

// layer reads a LayerParameter ending at end: its name and blobs.
func (w *wireReader) layer(end int64) (streamLayer, error) {
	var l streamLayer
	for w.off < end {
		num, typ, v, err := w.field(end)
		if err != nil {
			return l, err
		}
		n := int64(v)
		if typ != protowire.BytesType {
			if num == fieldLayerName || num == fieldLayerBlobs {
				return l, errNotStreamed
			}
			continue
		}
		switch num {
		case fieldLayerName:
			b, err := w.read(n)
			if err != nil {
				return l, err
			}
			l.name = string(b)
		case fieldLayerBlobs:
			b, err := w.blob(w.off + n)
			if err != nil {
				return l, err
			}
			l.blobs = append(l.blobs, b)
			if w.index += 300 + proto.Size(b.header); w.index > streamIndexLimit {
				return l, errNotStreamed
			}
		default:
			if err := w.skip(n); err != nil {
				return l, err
			}
		}
	}
	return l, nil
}

// blob reads a BlobProto ending at end: the spans of its values, and its
// other fields decoded (they are a few bytes: the shape).
func (w *wireReader) blob(end int64) (streamBlob, error) {
	var b streamBlob
	var header []byte
	for w.off < end {
		num, typ, v, err := w.field(end)
		if err != nil {
			return b, err
		}
		n := int64(v)
		var runs *[]span
		switch num {
		case fieldBlobData:
			runs = &b.data
		case fieldBlobDiff:
			runs = &b.diff
		case fieldBlobDData:
			runs = &b.ddata
		case fieldBlobDDiff:
			runs = &b.ddiff
		case fieldBlobRawData, fieldBlobRawDiff:
			return b, errNotStreamed
		}
		if runs != nil {
			width := int64(4)
			if num == fieldBlobDData || num == fieldBlobDDiff {
				width = 8
			}
			if typ != protowire.BytesType || n%width != 0 {
				return b, errNotStreamed // not packed, or cut short
			}
			if n > 0 {
				*runs = append(*runs, span{w.off, n})
			}
			if err := w.skip(n); err != nil {
				return b, err
			}
			continue
		}
		// Another field (the shape, its legacy dimensions, the raw
		// types): written again into the header.
		header = protowire.AppendTag(header, num, typ)
		switch typ {
		case protowire.VarintType:
			header = protowire.AppendVarint(header, v)
		case protowire.Fixed32Type:
			header = protowire.AppendFixed32(header, uint32(v))
		case protowire.Fixed64Type:
			header = protowire.AppendFixed64(header, v)
		case protowire.BytesType:
			if int64(len(header))+n > streamHeaderLimit {
				return b, errNotStreamed
			}
			val, err := w.read(n)
			if err != nil {
				return b, err
			}
			header = protowire.AppendBytes(header, val)
		}
	}
	b.header = &caffepb.BlobProto{}
	if err := proto.Unmarshal(header, b.header); err != nil {
		return b, errNotStreamed
	}
	return b, nil
}

// copyStreamed copies the weights of the .caffemodel at path into the
// net as CopyTrainedLayersFrom does, reading them straight from the file
// into the blobs; errNotStreamed where the file is not one it takes. As
// CopyTrainedLayersFrom, it checks every blob before it writes any; only
// an error reading the file in the second pass (it changed or became
// unreadable meanwhile) leaves some blobs loaded and others not.
func (n *Net[T]) copyStreamed(path string) error {
	f, size, err := fileio.Open(path, fileio.ProtoLimit)
	if err != nil {
		return errNotStreamed // the decoding path says what is wrong
	}
	defer f.Close()
	layers, err := indexModel(f, size)
	if err != nil {
		return errNotStreamed
	}
	model := make([]modelLayer, len(layers))
	for i, l := range layers {
		model[i].name = l.name
		for _, b := range l.blobs {
			model[i].blobs = append(model[i].blobs, b.header)
		}
	}
	jobs, err := n.matchModel(model)
	if err != nil {
		return err
	}
	type values struct {
		runs  []span
		width int
	}
	pick := func(doubles, floats []span) values {
		if len(doubles) > 0 {
			return values{doubles, 8}
		}
		return values{floats, 4}
	}
	count := func(v values) int {
		var bytes int64
		for _, r := range v.runs {
			bytes += r.n
		}
		return int(bytes / int64(v.width))
	}
	// The counts, as blob.FromProto checks them, before anything is
	// written.
	for _, j := range jobs {
		sb := &layers[j.layer].blobs[j.blob]
		for _, c := range []struct {
			what string
			v    values
			has  bool
		}{
			{"data", pick(sb.ddata, sb.data), true},
			{"diff", pick(sb.ddiff, sb.diff), len(sb.ddiff)+len(sb.diff) > 0},
		} {
			if got, want := count(c.v), j.target.Count(); c.has && got != want {
				double := ""
				if c.v.width == 8 {
					double = "double_"
				}
				return fmt.Errorf("blob: BlobProto has %d %s%s values, its shape needs %d", got, double, c.what, want)
			}
		}
	}
	buf := make([]byte, streamChunkBytes)
	for _, j := range jobs {
		sb := &layers[j.layer].blobs[j.blob]
		v := pick(sb.ddata, sb.data)
		if err := readValues(f, v.runs, v.width, j.target.MutableCPUData(), buf); err != nil {
			return fmt.Errorf("reading the weights of layer %q: %w", model[j.layer].name, err)
		}
		if len(sb.ddiff)+len(sb.diff) > 0 {
			v := pick(sb.ddiff, sb.diff)
			if err := readValues(f, v.runs, v.width, j.target.MutableCPUDiff(), buf); err != nil {
				return fmt.Errorf("reading the weights of layer %q: %w", model[j.layer].name, err)
			}
		}
	}
	return nil
}

// readValues reads the little-endian float32 (width 4) or float64 (8)
// values of runs into dst, through buf.
func readValues[T Float](f *os.File, runs []span, width int, dst []T, buf []byte) error {
	i := 0
	for _, r := range runs {
		for off, end := r.off, r.off+r.n; off < end; {
			b := buf[:min(int64(len(buf)), end-off)]
			if _, err := f.ReadAt(b, off); err != nil {
				return err
			}
			off += int64(len(b))
			if width == 4 {
				for p := 0; p < len(b); p += 4 {
					dst[i] = T(math.Float32frombits(binary.LittleEndian.Uint32(b[p:])))
					i++
				}
				continue
			}
			for p := 0; p < len(b); p += 8 {
				dst[i] = T(math.Float64frombits(binary.LittleEndian.Uint64(b[p:])))
				i++
			}
		}
	}
	return nil
}
