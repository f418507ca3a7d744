package blob

import (
	"math"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// TestHalfToFloat checks the half-precision conversion on its edge cases.
func TestHalfToFloat(t *testing.T) {
	for h, want := range map[uint16]float32{
		0x3c00: 1, 0xc000: -2, 0x7bff: 65504, 0x0001: 1.0 / (1 << 24), 0x8000: float32(math.Copysign(0, -1)),
		0x7c00: float32(math.Inf(1)), 0x3555: 0.333251953125,
	} {
		if got := halfToFloat(h); got != want || math.Signbit(float64(got)) != math.Signbit(float64(want)) {
			t.Errorf("half %#04x = %v, want %v", h, got, want)
		}
	}
	if !math.IsNaN(float64(halfToFloat(0x7e00))) {
		t.Error("half 0x7e00 is not NaN")
	}
}

// TestNVCaffeRawData reads blobs as NVCaffe 0.17 writes them (raw_data
// with raw_data_type, FLOAT16 by default for its half-precision nets),
// encoded by protoc from NVCaffe's field numbers, which caffe.proto keeps.
func TestNVCaffeRawData(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not installed (Debian: protobuf-compiler); .ci/run installs it")
	}
	_, here, _, _ := runtime.Caller(0)
	text := `shape { dim: 2 dim: 2 } raw_data_type: FLOAT16 raw_data: "\000\074\000\300\377\173\125\065" raw_diff_type: FLOAT raw_diff: "\000\000\200\077\000\000\000\100\000\000\100\100\000\000\200\100"`
	cmd := exec.Command(protoc, "-I"+filepath.Join(filepath.Dir(here), "..", "proto"), "--encode=caffe.BlobProto", "caffe.proto")
	cmd.Stdin = strings.NewReader(text)
	wire, err := cmd.Output()
	if err != nil {
		t.Fatalf("protoc: %v", err)
	}
	p := &caffepb.BlobProto{}
	if err := proto.Unmarshal(wire, p); err != nil {
		t.Fatal(err)
	}
	b, _ := New[float32]()
	if err := b.FromProto(p, true); err != nil {
		t.Fatal(err)
	}
	if got, want := b.CPUData(), []float32{1, -2, 65504, 0.333251953125}; !slices.Equal(got, want) {
		t.Errorf("data %v, want %v", got, want)
	}
	if got, want := b.CPUDiff(), []float32{1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("diff %v, want %v", got, want)
	}
	bad := &caffepb.BlobProto{Shape: p.Shape, RawData: p.RawData}
	if err := b.FromProto(bad, true); err == nil || !strings.Contains(err.Error(), "raw_data_type") {
		t.Errorf("raw_data without a type: %v", err)
	}
	short := &caffepb.BlobProto{Shape: p.Shape, RawData: p.RawData[:6], RawDataType: p.RawDataType}
	if err := b.FromProto(short, true); err == nil {
		t.Error("raw_data too short for the shape was accepted")
	}
}

// TestNarrowExhaustive checks the FLOAT16 and BFLOAT16 encoders against
// their decoders over every 16-bit pattern: each finite value and each
// infinity encodes to its own bits, and the point halfway between two
// neighbours rounds to the one with the even mantissa, a hair either side
// of it to the nearer.
func TestNarrowExhaustive(t *testing.T) {
	for _, c := range []struct {
		name   string
		f      format
		decode func(uint16) float32
	}{{"FLOAT16", half, halfToFloat}, {"BFLOAT16", bfloat, bfloatToFloat}} {
		bad := 0
		for h := range uint32(1 << 16) {
			x := float64(c.decode(uint16(h)))
			if math.IsNaN(x) {
				if got := narrow(x, c.f); !math.IsNaN(float64(c.decode(got))) {
					t.Errorf("%s: NaN %#04x encodes to %#04x, not a NaN", c.name, h, got)
				}
				continue
			}
			if got := narrow(x, c.f); got != uint16(h) {
				bad++
				if bad < 5 {
					t.Errorf("%s: %v (%#04x) encodes to %#04x", c.name, x, h, got)
				}
			}
			// The neighbour above, for the positive finite values below
			// the largest.
			next := float64(c.decode(uint16(h + 1)))
			if h&0x8000 != 0 || math.IsInf(x, 0) || math.IsInf(next, 0) || math.IsNaN(next) {
				continue
			}
			mid := (x + next) / 2 // exact in float64
			even := uint16(h)
			if h&1 != 0 {
				even = uint16(h + 1)
			}
			if got := narrow(mid, c.f); got != even {
				t.Errorf("%s: halfway %v between %#04x and %#04x encodes to %#04x, want %#04x", c.name, mid, h, h+1, got, even)
			}
			hair := (next - x) / 1024
			if got := narrow(mid-hair, c.f); got != uint16(h) {
				t.Errorf("%s: just below halfway after %#04x encodes to %#04x", c.name, h, got)
			}
			if got := narrow(mid+hair, c.f); got != uint16(h+1) {
				t.Errorf("%s: just above halfway after %#04x encodes to %#04x", c.name, h, got)
			}
		}
	}
	// Past the largest finite value: halfway to the next power of two
	// rounds to infinity, just below it to the largest.
	if got := narrow(65520, half); got != 0x7c00 {
		t.Errorf("FLOAT16 65520 = %#04x, want infinity", got)
	}
	if got := narrow(-65519.9, half); got != 0xfbff {
		t.Errorf("FLOAT16 -65519.9 = %#04x, want -65504", got)
	}
	if got := narrow(math.MaxFloat32, bfloat); got != 0x7f80 {
		t.Errorf("BFLOAT16 MaxFloat32 = %#04x, want infinity", got)
	}
	if got := narrow(1e-10, half); got != 0 {
		t.Errorf("FLOAT16 1e-10 = %#04x, want 0", got)
	}
}

// TestBfloatMatchesFloat32Rounding checks BFLOAT16 against the usual
// rounding of a float32's bits (add 0x7fff and the lowest kept bit, keep
// the upper half), over float32 patterns spread across the whole range.
func TestBfloatMatchesFloat32Rounding(t *testing.T) {
	for i := range uint64(1 << 20) {
		bits := uint32(i * 4093 * 1031) // a stride through every exponent
		x := math.Float32frombits(bits)
		if math.IsNaN(float64(x)) {
			continue
		}
		want := uint16((bits + 0x7fff + (bits>>16)&1) >> 16)
		if got := narrow(float64(x), bfloat); got != want {
			t.Fatalf("%v (%#08x): BFLOAT16 %#04x, want %#04x", x, bits, got, want)
		}
	}
}

// TestToProtoRaw round-trips blobs through NVCaffe's compact format: FLOAT
// and DOUBLE keep every value of a blob of their type, FLOAT16 and
// BFLOAT16 keep values they can hold and round the rest; a type raw_data
// cannot hold is an error.
func TestToProtoRaw(t *testing.T) {
	values := []float32{1, -2, 0.1, 3.14159265, 65504, 1e-7, float32(math.Inf(-1)), 0}
	b, _ := New[float32](2, 4)
	copy(b.MutableCPUData(), values)
	for i := range b.MutableCPUDiff() {
		b.MutableCPUDiff()[i] = float32(i) / 3
	}
	for _, c := range []struct {
		typ  caffepb.Type
		want func(float32) float32
	}{
		{caffepb.Type_FLOAT, func(x float32) float32 { return x }},
		{caffepb.Type_DOUBLE, func(x float32) float32 { return x }},
		{caffepb.Type_FLOAT16, func(x float32) float32 { return halfToFloat(narrow(float64(x), half)) }},
		{caffepb.Type_BFLOAT16, func(x float32) float32 { return bfloatToFloat(narrow(float64(x), bfloat)) }},
	} {
		p, err := b.ToProtoRaw(c.typ, true)
		if err != nil {
			t.Fatal(err)
		}
		if p.GetRawDataType() != c.typ || p.GetRawDiffType() != c.typ || len(p.Data) != 0 {
			t.Fatalf("%v: types %v/%v, %d float values", c.typ, p.GetRawDataType(), p.GetRawDiffType(), len(p.Data))
		}
		wire, err := proto.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		back := &caffepb.BlobProto{}
		if err := proto.Unmarshal(wire, back); err != nil {
			t.Fatal(err)
		}
		got, _ := New[float32]()
		if err := got.FromProto(back, true); err != nil {
			t.Fatalf("%v: %v", c.typ, err)
		}
		if !slices.Equal(got.Shape(), b.Shape()) {
			t.Errorf("%v: shape %v", c.typ, got.Shape())
		}
		for i, x := range b.CPUData() {
			if w := c.want(x); got.CPUData()[i] != w {
				t.Errorf("%v: data[%d] = %v, want %v (from %v)", c.typ, i, got.CPUData()[i], w, x)
			}
		}
		for i, x := range b.CPUDiff() {
			if w := c.want(x); got.CPUDiff()[i] != w {
				t.Errorf("%v: diff[%d] = %v, want %v", c.typ, i, got.CPUDiff()[i], w)
			}
		}
	}
	// A float64 blob keeps its values as DOUBLE.
	d, _ := New[float64](3)
	copy(d.MutableCPUData(), []float64{math.Pi, 1e-300, -1e300})
	p, err := d.ToProtoRaw(caffepb.Type_DOUBLE, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.RawDiff != nil {
		t.Error("raw_diff written without writeDiff")
	}
	d2, _ := New[float64]()
	if err := d2.FromProto(p, true); err != nil || !slices.Equal(d2.CPUData(), d.CPUData()) {
		t.Errorf("DOUBLE round trip: %v, %v", d2.CPUData(), err)
	}
	if _, err := b.ToProtoRaw(caffepb.Type_INT, false); err == nil {
		t.Error("raw_data of type INT was written")
	}
}
