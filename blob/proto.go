package blob

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// ToProto returns the blob as a BlobProto: its shape in shape.dim and its
// data (and diff, if writeDiff) in the float fields for float32 blobs and
// the double fields for float64 blobs, exactly as Caffe writes them. The
// legacy num/channels/height/width fields are not written.
func (b *Blob[T]) ToProto(writeDiff bool) *caffepb.BlobProto {
	dims := make([]int64, len(b.shape))
	for i, d := range b.shape {
		dims[i] = int64(d)
	}
	p := &caffepb.BlobProto{Shape: &caffepb.BlobShape{Dim: dims}}
	switch data := any(b.CPUData()).(type) {
	case []float32:
		p.Data = append([]float32(nil), data...)
		if writeDiff {
			p.Diff = append([]float32(nil), any(b.CPUDiff()).([]float32)...)
		}
	case []float64:
		p.DoubleData = append([]float64(nil), data...)
		if writeDiff {
			p.DoubleDiff = append([]float64(nil), any(b.CPUDiff()).([]float64)...)
		}
	}
	return p
}

// hasLegacyShape reports whether p uses the old 4-D shape fields.
func hasLegacyShape(p *caffepb.BlobProto) bool {
	return p.Num != nil || p.Channels != nil || p.Height != nil || p.Width != nil
}

// protoShape returns the shape p describes: its legacy 4-D fields if any is
// set, its shape.dim otherwise.
func protoShape(p *caffepb.BlobProto) []int64 {
	if hasLegacyShape(p) {
		return []int64{int64(p.GetNum()), int64(p.GetChannels()), int64(p.GetHeight()), int64(p.GetWidth())}
	}
	return p.GetShape().GetDim()
}

// ShapeEquals reports whether the blob has the shape p describes. For
// protos with the legacy 4-D fields it compares them with the blob's last
// four legacy dimensions, as Caffe does, so that a blob of shape {11} equals
// a proto of 1x1x1x11 (old parameter blobs were 1x1xMxN).
func (b *Blob[T]) ShapeEquals(p *caffepb.BlobProto) bool {
	if hasLegacyShape(p) {
		if len(b.shape) > 4 {
			return false
		}
		want := protoShape(p)
		for i := range 4 {
			d, _ := b.LegacyShape(i - 4)
			if int64(d) != want[i] {
				return false
			}
		}
		return true
	}
	dims := p.GetShape().GetDim()
	if len(dims) != len(b.shape) {
		return false
	}
	for i, d := range dims {
		if int64(b.shape[i]) != d {
			return false
		}
	}
	return true
}

// FromProto loads the blob from p. With reshape the blob takes p's shape;
// without it p's shape must already equal the blob's. The data come from
// double_data if it is non-empty, from data otherwise, or, when both are
// empty, from NVCaffe's raw_data (see ToProtoRaw), converted to T, and
// must number exactly Count; the diff likewise if p has one.
func (b *Blob[T]) FromProto(p *caffepb.BlobProto, reshape bool) error {
	// Everything is checked before anything changes, so a bad proto leaves
	// the blob as it was.
	var shape []int
	count := b.count
	if reshape {
		var err error
		if shape, err = dimsToShape(protoShape(p)); err != nil {
			return err
		}
		if count, err = shapeCount(shape); err != nil {
			return fmt.Errorf("blob: BlobProto: %w", err)
		}
	} else if !b.ShapeEquals(p) {
		return fmt.Errorf("blob: shape mismatch (reshape not set): blob is %s, BlobProto is %v", b.ShapeString(), protoShape(p))
	}
	var data []T
	var err error
	if len(p.GetDoubleData()) == 0 && len(p.GetData()) == 0 && p.RawData != nil {
		data, err = rawValues[T](p.GetRawData(), p.RawDataType, count, "data")
	} else {
		data, err = protoValues[T](p.GetDoubleData(), p.GetData(), count, "data")
	}
	if err != nil {
		return err
	}
	var diff []T
	switch {
	case len(p.GetDoubleDiff()) > 0 || len(p.GetDiff()) > 0:
		diff, err = protoValues[T](p.GetDoubleDiff(), p.GetDiff(), count, "diff")
	case p.RawDiff != nil:
		diff, err = rawValues[T](p.GetRawDiff(), p.RawDiffType, count, "diff")
	}
	if err != nil {
		return err
	}
	if reshape {
		if err := b.Reshape(shape); err != nil {
			return err
		}
	}
	copy(b.MutableCPUData(), data)
	if diff != nil {
		copy(b.MutableCPUDiff(), diff)
	}
	return nil
}

// dimsToShape converts proto dimensions to a shape, rejecting ones that no
// blob can have.
func dimsToShape(dims []int64) ([]int, error) {
	if len(dims) > MaxAxes {
		return nil, fmt.Errorf("blob: BlobShape has %d axes, at most %d are allowed", len(dims), MaxAxes)
	}
	shape := make([]int, len(dims))
	for i, d := range dims {
		if d < 0 || d > math.MaxInt32 {
			return nil, fmt.Errorf("blob: BlobShape %v: dimension %d at axis %d is out of range", dims, d, i)
		}
		shape[i] = int(d)
	}
	return shape, nil
}

// protoValues returns the double values if there are any, the float values
// otherwise, as T; there must be exactly count of them.
func protoValues[T Float](doubles []float64, floats []float32, count int, what string) ([]T, error) {
	if len(doubles) > 0 {
		if len(doubles) != count {
			return nil, fmt.Errorf("blob: BlobProto has %d double_%s values, its shape needs %d", len(doubles), what, count)
		}
		return convert[T](doubles), nil
	}
	if len(floats) != count {
		return nil, fmt.Errorf("blob: BlobProto has %d %s values, its shape needs %d", len(floats), what, count)
	}
	return convert[T](floats), nil
}

// rawSize is the size in bytes of one raw_data value of each type that
// raw_data may hold: NVCaffe's FLOAT, DOUBLE and FLOAT16, and gocaffe's
// BFLOAT16.
var rawSize = map[caffepb.Type]int{caffepb.Type_FLOAT: 4, caffepb.Type_DOUBLE: 8, caffepb.Type_FLOAT16: 2, caffepb.Type_BFLOAT16: 2}

// rawValues decodes NVCaffe's raw_data (or raw_diff): count little-endian
// values of the given type (FLOAT, DOUBLE, FLOAT16 or BFLOAT16), as NVCaffe
// 0.17 writes its caffemodels by default.
func rawValues[T Float](raw []byte, typ *caffepb.Type, count int, what string) ([]T, error) {
	if typ == nil {
		return nil, fmt.Errorf("blob: BlobProto has raw_%s without raw_%s_type", what, what)
	}
	size := rawSize[*typ]
	if size == 0 {
		return nil, fmt.Errorf("blob: BlobProto raw_%s of type %v: only FLOAT, DOUBLE, FLOAT16 and BFLOAT16 are supported", what, *typ)
	}
	if len(raw) != size*count {
		return nil, fmt.Errorf("blob: BlobProto has %d bytes of raw_%s (%v), its shape needs %d", len(raw), what, *typ, size*count)
	}
	out := make([]T, count)
	for i := range out {
		switch *typ {
		case caffepb.Type_FLOAT:
			out[i] = T(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		case caffepb.Type_DOUBLE:
			out[i] = T(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
		case caffepb.Type_FLOAT16:
			out[i] = T(halfToFloat(binary.LittleEndian.Uint16(raw[2*i:])))
		default:
			out[i] = T(bfloatToFloat(binary.LittleEndian.Uint16(raw[2*i:])))
		}
	}
	return out, nil
}

// ToProtoRaw returns the blob as NVCaffe's compact BlobProto: its shape and
// its data (and diff, if writeDiff) as raw_data (raw_diff) of type typ,
// little-endian, with raw_data_type (raw_diff_type) saying so. NVCaffe
// writes its caffemodels so unless store_blobs_in_old_format is set, with
// the type its blobs are stored in. FLOAT16 and BFLOAT16 round to nearest,
// ties to even, and a value beyond their range becomes an infinity; FLOAT
// and DOUBLE keep every value of a blob of their own type. BVLC Caffe
// cannot read raw_data: ToProto writes what it reads.
func (b *Blob[T]) ToProtoRaw(typ caffepb.Type, writeDiff bool) (*caffepb.BlobProto, error) {
	size := rawSize[typ]
	if size == 0 {
		return nil, fmt.Errorf("blob: raw_data of type %v: only FLOAT, DOUBLE, FLOAT16 and BFLOAT16 can be written", typ)
	}
	dims := make([]int64, len(b.shape))
	for i, d := range b.shape {
		dims[i] = int64(d)
	}
	p := &caffepb.BlobProto{Shape: &caffepb.BlobShape{Dim: dims}, RawDataType: typ.Enum(), RawData: rawBytes(b.CPUData(), typ, size)}
	if writeDiff {
		p.RawDiffType, p.RawDiff = typ.Enum(), rawBytes(b.CPUDiff(), typ, size)
	}
	return p, nil
}

// RawType is the Type of a blob of element type T stored whole: FLOAT for
// float32, DOUBLE for float64, the raw_data_type NVCaffe writes for a blob
// stored in that type.
func RawType[T Float]() caffepb.Type {
	if elemSize[T]() == 8 {
		return caffepb.Type_DOUBLE
	}
	return caffepb.Type_FLOAT
}

// rawBytes encodes v as raw_data of type typ, size bytes a value.
func rawBytes[T Float](v []T, typ caffepb.Type, size int) []byte {
	out := make([]byte, size*len(v))
	for i, x := range v {
		switch typ {
		case caffepb.Type_FLOAT:
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(x)))
		case caffepb.Type_DOUBLE:
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(float64(x)))
		case caffepb.Type_FLOAT16:
			binary.LittleEndian.PutUint16(out[2*i:], narrow(float64(x), half))
		default:
			binary.LittleEndian.PutUint16(out[2*i:], narrow(float64(x), bfloat))
		}
	}
	return out
}

// halfToFloat converts an IEEE 754 half-precision value.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
	case frac == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: frac * 2^-24.
	v := float32(frac) * (1.0 / (1 << 24))
	if sign != 0 {
		v = -v
	}
	return v
}

// bfloatToFloat converts a bfloat16 value: the upper half of a float32.
func bfloatToFloat(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// format describes a 16-bit binary floating-point format by its stored
// mantissa bits and its normal exponents.
type format struct{ mant, minExp, maxExp int }

var (
	half   = format{mant: 10, minExp: -14, maxExp: 15}  // IEEE 754 binary16
	bfloat = format{mant: 7, minExp: -126, maxExp: 127} // bfloat16
)

// narrow rounds x to the 16-bit format f, to nearest with ties to even, and
// returns its bits. Rounding in float64 once, from x itself, avoids the
// double rounding of going through float32 for a float64 blob.
func narrow(x float64, f format) uint16 {
	var sign uint16
	if math.Signbit(x) {
		sign, x = 0x8000, -x
	}
	inf := uint16(f.maxExp-f.minExp+2) << f.mant
	// Halfway between the largest finite value and the next power of two
	// rounds up, to infinity.
	overflow := math.Ldexp(2-math.Ldexp(1, -f.mant-1), f.maxExp)
	switch {
	case math.IsNaN(x):
		return sign | inf | 1<<(f.mant-1) // a quiet NaN
	case x >= overflow:
		return sign | inf
	case x == 0:
		return sign
	}
	_, e := math.Frexp(x)     // x = m * 2^e, m in [0.5, 1)
	exp := max(e-1, f.minExp) // subnormals share the smallest exponent's step
	step := math.Ldexp(1, exp-f.mant)
	m := math.RoundToEven(x / step) // exact: step is a power of two
	// m counts steps of 2^(exp-mant): for a normal value it holds the
	// implicit leading bit, which the encoding folds into the exponent
	// field, and a carry to the next power of two lands there too.
	return sign | (uint16(exp-f.minExp)<<f.mant + uint16(m))
}

// convert returns v as a slice of T, without copying when it already is.
func convert[T Float, S Float](v []S) []T {
	if t, ok := any(v).([]T); ok {
		return t
	}
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = T(x)
	}
	return out
}
