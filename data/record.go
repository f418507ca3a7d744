package data

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// DatumRecord is a Datum read straight from its serialized bytes. Parse
// does not copy the pixel bytes: Data aliases the record, so a Data layer
// can read millions of records without allocating (proto.Unmarshal copies
// every record's bytes into a fresh slice). It is valid as long as the
// record's bytes are, which for a Cursor's Value means until the next
// cursor move.
type DatumRecord struct {
	Channels, Height, Width int
	// Data holds the raw pixels (uint8, channel-major) or, when Encoded,
	// the bytes of a JPEG, PNG or GIF file.
	Data []byte
	// FloatData holds the values of float datums. After Parse its backing
	// array is the record's own and is reused by the next Parse.
	FloatData []float32
	Label     int32
	Encoded   bool

	// floats is the storage Parse owns for FloatData; SetDatum leaves it
	// alone, so that parsing never writes into a Datum's arrays.
	floats []float32
}

// Datum field numbers (caffe.proto).
const (
	datumChannels  = 1
	datumHeight    = 2
	datumWidth     = 3
	datumData      = 4
	datumLabel     = 5
	datumFloatData = 6
	datumEncoded   = 7
)

// Parse reads a serialized Datum, with protobuf's rules: the last value of
// a scalar field wins, float_data may be packed or not, unknown fields are
// skipped.
func (r *DatumRecord) Parse(b []byte) error {
	*r = DatumRecord{floats: r.floats[:0]}
	defer func() { r.FloatData = r.floats }()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("malformed Datum: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if n = r.field(num, typ, b); n < 0 {
			return fmt.Errorf("malformed Datum field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
	}
	return nil
}

// field consumes one field's value and returns its length, or a negative
// protowire error code. Known fields of an unexpected wire type are skipped
// as unknown, as the protobuf runtime does.
func (r *DatumRecord) field(num protowire.Number, typ protowire.Type, b []byte) int {
	switch {
	case typ == protowire.VarintType && isVarintField(num):
		v, n := protowire.ConsumeVarint(b)
		if n >= 0 {
			r.setVarint(num, v)
		}
		return n
	case typ == protowire.BytesType && num == datumData:
		v, n := protowire.ConsumeBytes(b)
		if n >= 0 {
			r.Data = v
		}
		return n
	case typ == protowire.Fixed32Type && num == datumFloatData:
		v, n := protowire.ConsumeFixed32(b)
		if n >= 0 {
			r.floats = append(r.floats, math.Float32frombits(v))
		}
		return n
	case typ == protowire.BytesType && num == datumFloatData:
		return r.packedFloats(b)
	}
	return protowire.ConsumeFieldValue(num, typ, b)
}

func isVarintField(num protowire.Number) bool {
	switch num {
	case datumChannels, datumHeight, datumWidth, datumLabel, datumEncoded:
		return true
	}
	return false
}

func (r *DatumRecord) setVarint(num protowire.Number, v uint64) {
	switch num {
	case datumChannels:
		r.Channels = int(int32(v))
	case datumHeight:
		r.Height = int(int32(v))
	case datumWidth:
		r.Width = int(int32(v))
	case datumLabel:
		r.Label = int32(v)
	case datumEncoded:
		r.Encoded = v != 0
	}
}

// packedFloats appends a packed float_data run.
func (r *DatumRecord) packedFloats(b []byte) int {
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return n
	}
	if len(v)%4 != 0 {
		return -1 // protowire's code for truncated data
	}
	for ; len(v) > 0; v = v[4:] {
		bits, _ := protowire.ConsumeFixed32(v)
		r.floats = append(r.floats, math.Float32frombits(bits))
	}
	return n
}

// SetDatum makes r a view of d, without copying its payload. A later Parse
// into r parses into storage of its own, never into d's arrays.
func (r *DatumRecord) SetDatum(d *caffepb.Datum) {
	*r = DatumRecord{
		Channels: int(d.GetChannels()), Height: int(d.GetHeight()), Width: int(d.GetWidth()),
		Data: d.GetData(), FloatData: d.GetFloatData(), Label: d.GetLabel(), Encoded: d.GetEncoded(),
		floats: r.floats,
	}
}

// Shape returns a raw record's (channels, height, width) after checking
// that its payload holds exactly that many values (see DatumShape).
func (r *DatumRecord) Shape() (c, h, w int, err error) {
	if r.Encoded {
		return 0, 0, 0, fmt.Errorf("datum is encoded: decode it first")
	}
	return checkShape(r.Channels, r.Height, r.Width, len(r.Data), len(r.FloatData))
}

// checkShape checks a raw datum's dimensions against its payload: bytes if
// there are any, float values otherwise (Caffe's rule).
func checkShape(c, h, w, nBytes, nFloats int) (int, int, int, error) {
	if c <= 0 || h <= 0 || w <= 0 {
		return 0, 0, 0, fmt.Errorf("datum has shape %dx%dx%d: every dimension must be positive", c, h, w)
	}
	n := c * h * w
	switch {
	case nBytes > 0 && nBytes != n:
		return 0, 0, 0, fmt.Errorf("datum of shape %dx%dx%d holds %d bytes, want %d", c, h, w, nBytes, n)
	case nBytes == 0 && nFloats != n:
		return 0, 0, 0, fmt.Errorf("datum of shape %dx%dx%d holds %d float values, want %d", c, h, w, nFloats, n)
	}
	return c, h, w, nil
}
