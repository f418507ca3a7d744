package blob

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func TestLegacyBlobProtoShapeEquals(t *testing.T) {
	forBothTypes(t, testLegacyBlobProtoShapeEquals[float32], testLegacyBlobProtoShapeEquals[float64])
}

// Mirrors test_blob's LegacyBlobProtoShapeEquals.
func testLegacyBlobProtoShapeEquals[T Float](t *testing.T) {
	legacy := func(n, c, h, w int32) *caffepb.BlobProto {
		return &caffepb.BlobProto{Num: &n, Channels: &c, Height: &h, Width: &w}
	}
	b := mustNew[T](t, 3, 2)
	if !b.ShapeEquals(legacy(1, 1, 3, 2)) {
		t.Error("(3 x 2) blob != (1 x 1 x 3 x 2) legacy blob")
	}
	if b.ShapeEquals(legacy(0, 1, 3, 2)) {
		t.Error("(3 x 2) blob == (0 x 1 x 3 x 2) legacy blob")
	}
	if b.ShapeEquals(legacy(3, 1, 3, 2)) {
		t.Error("(3 x 2) blob == (3 x 1 x 3 x 2) legacy blob")
	}
	if err := b.Reshape([]int{1, 3, 2}); err != nil {
		t.Fatal(err)
	}
	if !b.ShapeEquals(legacy(1, 1, 3, 2)) {
		t.Error("(1 x 3 x 2) blob != (1 x 1 x 3 x 2) legacy blob")
	}
	if err := b.Reshape([]int{2, 3, 2}); err != nil {
		t.Fatal(err)
	}
	if b.ShapeEquals(legacy(1, 1, 3, 2)) {
		t.Error("(2 x 3 x 2) blob == (1 x 1 x 3 x 2) legacy blob")
	}
	if err := b.Reshape([]int{11}); err != nil {
		t.Fatal(err)
	}
	if !b.ShapeEquals(legacy(1, 1, 1, 11)) {
		t.Error("(11) blob != (1 x 1 x 1 x 11) legacy blob")
	}
	if !b.ShapeEquals(&caffepb.BlobProto{Shape: &caffepb.BlobShape{Dim: []int64{11}}}) ||
		b.ShapeEquals(&caffepb.BlobProto{Shape: &caffepb.BlobShape{Dim: []int64{1, 11}}}) {
		t.Error("ShapeEquals with shape.dim compares dimensions exactly")
	}
}

func TestToProtoFields(t *testing.T) {
	b32 := mustNew[float32](t, 2, 3)
	copy(b32.MutableCPUData(), []float32{1, 2, 3, 4, 5, 6})
	p := b32.ToProto(false)
	if !slices.Equal(p.GetShape().GetDim(), []int64{2, 3}) || len(p.Data) != 6 || p.Diff != nil || p.DoubleData != nil {
		t.Errorf("float32 ToProto(false) = %v", p)
	}
	if p.Num != nil || p.Channels != nil || p.Height != nil || p.Width != nil {
		t.Error("ToProto wrote the legacy shape fields")
	}
	if p := b32.ToProto(true); len(p.Diff) != 6 || p.DoubleDiff != nil {
		t.Errorf("float32 ToProto(true) diff: %v", p)
	}
	b64 := mustNew[float64](t, 4)
	copy(b64.MutableCPUData(), []float64{0.1, 0.2, 0.3, 0.4})
	p = b64.ToProto(true)
	if len(p.DoubleData) != 4 || len(p.DoubleDiff) != 4 || p.Data != nil || p.Diff != nil {
		t.Errorf("float64 ToProto(true) = %v", p)
	}
	if p.DoubleData[0] != 0.1 {
		t.Errorf("float64 value lost precision: %v", p.DoubleData[0])
	}
}

func TestProtoRoundTrip(t *testing.T) {
	forBothTypes(t, testProtoRoundTrip[float32], testProtoRoundTrip[float64])
}

func testProtoRoundTrip[T Float](t *testing.T) {
	src := mustNew[T](t, 2, 1, 3)
	for i := range src.Count() {
		src.MutableCPUData()[i] = T(i) / 3
		src.MutableCPUDiff()[i] = -T(i)
	}
	p := src.ToProto(true)
	wire, err := proto.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back caffepb.BlobProto
	if err := proto.Unmarshal(wire, &back); err != nil {
		t.Fatal(err)
	}
	dst := mustNew[T](t)
	if err := dst.FromProto(&back, true); err != nil {
		t.Fatal(err)
	}
	if !dst.SameShape(src) || !slices.Equal(dst.CPUData(), src.CPUData()) || !slices.Equal(dst.CPUDiff(), src.CPUDiff()) {
		t.Errorf("round trip: shape %v data %v diff %v", dst.Shape(), dst.CPUData(), dst.CPUDiff())
	}
}

func TestFromProtoConvertsAndUsesLegacyShape(t *testing.T) {
	n, c, h, w := int32(1), int32(2), int32(1), int32(2)
	p := &caffepb.BlobProto{Num: &n, Channels: &c, Height: &h, Width: &w,
		Shape:      &caffepb.BlobShape{Dim: []int64{99}}, // ignored: legacy fields win
		Data:       []float32{9, 9, 9, 9},                // ignored: double_data wins
		DoubleData: []float64{1.5, 2.5, 3.5, 4.5},
		Diff:       []float32{-1, -2, -3, -4},
	}
	b := mustNew[float32](t)
	if err := b.FromProto(p, true); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Shape(), []int{1, 2, 1, 2}) {
		t.Errorf("shape %v, want the legacy 1 2 1 2", b.Shape())
	}
	if !slices.Equal(b.CPUData(), []float32{1.5, 2.5, 3.5, 4.5}) || !slices.Equal(b.CPUDiff(), []float32{-1, -2, -3, -4}) {
		t.Errorf("data %v diff %v", b.CPUData(), b.CPUDiff())
	}
}

func TestFromProtoErrors(t *testing.T) {
	b := mustNew[float32](t, 2, 3)
	cases := []struct {
		name    string
		p       *caffepb.BlobProto
		reshape bool
		want    string
	}{
		{"too few values", &caffepb.BlobProto{Shape: &caffepb.BlobShape{Dim: []int64{2, 3}}, Data: []float32{1, 2}}, true, "has 2 data values, its shape needs 6"},
		{"too many doubles", &caffepb.BlobProto{Shape: &caffepb.BlobShape{Dim: []int64{1}}, DoubleData: []float64{1, 2}}, true, "2 double_data values"},
		{"diff count", &caffepb.BlobProto{Shape: &caffepb.BlobShape{Dim: []int64{1}}, Data: []float32{1}, Diff: []float32{1, 2}}, true, "2 diff values"},
		{"negative dim", &caffepb.BlobProto{Shape: &caffepb.BlobShape{Dim: []int64{2, -3}}}, true, "dimension -3 at axis 1"},
		{"shape mismatch", &caffepb.BlobProto{Shape: &caffepb.BlobShape{Dim: []int64{3, 2}}, Data: make([]float32, 6)}, false, "shape mismatch (reshape not set)"},
	}
	for _, c := range cases {
		err := b.FromProto(c.p, c.reshape)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.want)
		}
	}
	ok := &caffepb.BlobProto{Shape: &caffepb.BlobShape{Dim: []int64{2, 3}}, Data: []float32{1, 2, 3, 4, 5, 6}}
	if err := b.FromProto(ok, false); err != nil || b.CPUData()[5] != 6 {
		t.Errorf("FromProto of the same shape without reshape: %v", err)
	}
}
