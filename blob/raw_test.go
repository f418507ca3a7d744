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
