package protoio

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/badinput"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// A caffemodel of 10 million empty layers (30 MB, 8 GB decoded) and a
// prototxt of 2 million are refused before decoding, naming the file.
func TestDecodingThatCannotFitIsRefused(t *testing.T) {
	if !badinput.UnderMemoryLimit(t) {
		return
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "layers.caffemodel")
	os.WriteFile(bin, badinput.EmptyLayers(10_000_000), 0o644)
	err := ReadProtoFromBinaryFile(bin, &caffepb.NetParameter{})
	if err == nil || !strings.Contains(err.Error(), bin+": decoding it as a caffe.NetParameter of 10000001 messages needs 8.0 GiB, but only") {
		t.Errorf("binary: %v", err)
	}
	text := filepath.Join(dir, "layers.prototxt")
	os.WriteFile(text, bytes.Repeat([]byte("layer {}\n"), 2_000_000), 0o644)
	err = ReadProtoFromTextFile(text, &caffepb.NetParameter{})
	if err == nil || !strings.Contains(err.Error(), text+": decoding it as a caffe.NetParameter of 2000000 messages needs") {
		t.Errorf("text: %v", err)
	}
}

// The estimate is not below what decoding takes, for the messages a
// caffemodel holds, and not far above it.
func TestDecodeEstimate(t *testing.T) {
	net := &caffepb.NetParameter{Name: proto.String("n")}
	for i := range 2000 {
		net.Layer = append(net.Layer, &caffepb.LayerParameter{
			Name: proto.String("conv"), Type: proto.String("Convolution"), Bottom: []string{"a"}, Top: []string{"b"},
			ConvolutionParam: &caffepb.ConvolutionParameter{NumOutput: proto.Uint32(uint32(i)), KernelSize: []uint32{3}},
			Blobs:            []*caffepb.BlobProto{{Shape: &caffepb.BlobShape{Dim: []int64{4, 4}}, Data: make([]float32, 16)}},
		})
	}
	b, err := proto.Marshal(net)
	if err != nil {
		t.Fatal(err)
	}
	var e estimate
	if err := e.message(b, net.ProtoReflect().Descriptor(), 0); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var got caffepb.NetParameter
	if err := proto.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	took := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes on the wire, %d messages, estimate %d, decoding allocated %d", len(b), e.messages, e.bytes, took)
	if e.messages != 1+2000*4 {
		t.Errorf("%d messages, want %d", e.messages, 1+2000*4)
	}
	if e.bytes < took*8/10 || e.bytes > took*3 {
		t.Errorf("estimate %d for %d allocated", e.bytes, took)
	}
	if n := openings([]byte(`a { b: "{<" c < d: '\'{' > } # {{{` + "\n" + `e {}`)); n != 3 {
		t.Errorf("openings: %d, want 3", n)
	}
}
