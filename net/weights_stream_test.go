package net_test

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// streamNet has a blob larger than the streamed reader's megabyte of
// buffer (ip1's 600 x 600 weights in float32), a 4-D one, and layers
// without weights.
const streamNet = `name: "StreamNet"
layer { name: "data" type: "DummyData" top: "data" top: "img"
  dummy_data_param { shape { dim: 2 dim: 600 } data_filler { type: "gaussian" } shape { dim: 1 dim: 2 dim: 5 dim: 5 } data_filler { type: "gaussian" } } }
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
  inner_product_param { num_output: 600 weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } } }
layer { name: "relu" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
  inner_product_param { num_output: 3 weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } } }
layer { name: "conv" type: "Convolution" bottom: "img" top: "conv"
  convolution_param { num_output: 3 kernel_size: 3 weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } } }`

// A .caffemodel loaded from its file (read straight into the blobs where
// it has the current format) sets the weights, and the diffs, that the
// decoded NetParameter sets, bit for bit, in every encoding of the values
// (float, double, NVCaffe's raw, packed runs split in two, legacy 4-D
// shapes, V1 layers); and a file that does not fit the net is refused
// with the decoding path's error, changing nothing.
func TestCopyTrainedLayersFromFileIsDecoded(t *testing.T) {
	src := buildT[float32](t, streamNet, 5)
	for name, variant := range map[string]func(*testing.T) []byte{
		"float": func(t *testing.T) []byte { return marshal(t, src.ToProto(false)) },
		"diff":  func(t *testing.T) []byte { return marshal(t, src.ToProto(true)) },
		"double": func(t *testing.T) []byte {
			m := src.ToProto(true)
			for _, l := range m.Layer {
				for _, b := range l.Blobs {
					b.DoubleData, b.DoubleDiff = widen(b.Data), widen(b.Diff)
					b.Data, b.Diff = nil, nil
				}
			}
			return marshal(t, m)
		},
		"raw": func(t *testing.T) []byte {
			m, err := src.ToProtoRaw(false)
			if err != nil {
				t.Fatal(err)
			}
			return marshal(t, m)
		},
		"legacy shape": func(t *testing.T) []byte {
			m := src.ToProto(false)
			for _, l := range m.Layer {
				for _, b := range l.Blobs {
					d := append(make([]int64, 4-len(b.Shape.Dim)), b.Shape.Dim...)
					for i := range 4 - len(b.Shape.Dim) {
						d[i] = 1
					}
					b.Num, b.Channels, b.Height, b.Width = proto.Int32(int32(d[0])), proto.Int32(int32(d[1])), proto.Int32(int32(d[2])), proto.Int32(int32(d[3]))
					b.Shape = nil
				}
			}
			return marshal(t, m)
		},
		"split runs": func(t *testing.T) []byte { return splitRuns(t, src.ToProto(true)) },
		"v1": func(t *testing.T) []byte {
			m := src.ToProto(false)
			v1 := &caffepb.NetParameter{Name: m.Name}
			for _, l := range m.Layer {
				if len(l.Blobs) > 0 {
					v1.Layers = append(v1.Layers, &caffepb.V1LayerParameter{Name: l.Name, Type: caffepb.V1LayerParameter_INNER_PRODUCT.Enum(), Blobs: l.Blobs})
				}
			}
			return marshal(t, v1)
		},
		"short": func(t *testing.T) []byte {
			m := src.ToProto(false)
			m.Layer[1].Blobs[0].Data = m.Layer[1].Blobs[0].Data[1:]
			return marshal(t, m)
		},
		"blob count": func(t *testing.T) []byte {
			m := src.ToProto(false)
			m.Layer[3].Blobs = m.Layer[3].Blobs[:1]
			return marshal(t, m)
		},
		"truncated": func(t *testing.T) []byte {
			b := marshal(t, src.ToProto(false))
			return b[:len(b)-100]
		},
	} {
		t.Run(name, func(t *testing.T) {
			b := variant(t)
			path := filepath.Join(t.TempDir(), "w.caffemodel")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			fromFile, decoded := buildT[float32](t, streamNet, 9), buildT[float32](t, streamNet, 9)
			before := params(fromFile)
			errFile := fromFile.CopyTrainedLayersFromFile(path)
			var m caffepb.NetParameter
			errDecoded := proto.Unmarshal(b, &m)
			if errDecoded == nil {
				if len(m.Layers) > 0 { // V1: as the file path upgrades it
					for _, l := range m.Layers {
						m.Layer = append(m.Layer, &caffepb.LayerParameter{Name: l.Name, Blobs: l.Blobs})
					}
					m.Layers = nil
				}
				errDecoded = decoded.CopyTrainedLayersFrom(&m)
			}
			switch {
			case errDecoded == nil && errFile != nil:
				t.Fatalf("from the file: %v; decoded: no error", errFile)
			case errDecoded != nil && errFile == nil:
				t.Fatalf("from the file: no error; decoded: %v", errDecoded)
			case errDecoded != nil:
				if name != "truncated" && !strings.Contains(errFile.Error(), errDecoded.Error()) {
					t.Errorf("from the file: %v; want the decoded path's %q", errFile, errDecoded)
				}
				if !equalParams(params(fromFile), before) {
					t.Error("a refused model changed the weights")
				}
				return
			}
			if got, want := params(fromFile), params(decoded); !equalParams(got, want) {
				t.Error("the file's weights differ from the decoded model's")
			}
			if got := params(fromFile); equalParams(got, before) {
				t.Error("nothing was loaded")
			}
		})
	}
}

// The loaded net holds the weights once: loading a model (here 1.4 MB of
// values and more) leaves no more behind than its blobs take, where the
// decoded path held the file and the decoded values too until collected.
func TestCopyTrainedLayersFromFileAllocates(t *testing.T) {
	src := buildT[float32](t, streamNet, 5)
	path := filepath.Join(t.TempDir(), "w.caffemodel")
	if err := os.WriteFile(path, marshal(t, src.ToProto(false)), 0o644); err != nil {
		t.Fatal(err)
	}
	dst := buildT[float32](t, streamNet, 9)
	for _, p := range dst.LearnableParams() {
		p.MutableCPUData() // the blobs' memory, before measuring
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := dst.CopyTrainedLayersFromFile(path); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// The reader's megabyte of buffer and one for the values: the file
	// is 1.45 MB, decoding would allocate twice that.
	if got := after.TotalAlloc - before.TotalAlloc; got > 2.5e6 {
		t.Errorf("loading allocated %d bytes, want at most 2.5e6", got)
	}
}

func buildT[T float32 | float64](t *testing.T, text string, seed int64) *net.Net[T] {
	t.Helper()
	n, err := net.New[T](parseNet(t, text), net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TEST.Enum()}, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func widen(v []float32) []float64 {
	if v == nil {
		return nil
	}
	w := make([]float64, len(v))
	for i, x := range v {
		w[i] = float64(x) + 1e-12 // not a float32: the double values are read as such
	}
	return w
}

// splitRuns encodes m with each blob's data and diff in two packed runs
// each (a writer may split a packed field; a reader concatenates them).
func splitRuns(t *testing.T, m *caffepb.NetParameter) []byte {
	var out []byte
	for _, l := range m.Layer {
		blobs := l.Blobs
		l.Blobs = nil
		lb := marshal(t, l)
		for _, b := range blobs {
			h := len(b.Data) / 2
			first := &caffepb.BlobProto{Shape: b.Shape, Data: b.Data[:h]}
			second := &caffepb.BlobProto{Data: b.Data[h:], Diff: b.Diff}
			bb := append(marshal(t, first), marshal(t, second)...)
			lb = protowire.AppendTag(lb, 7, protowire.BytesType)
			lb = protowire.AppendBytes(lb, bb)
		}
		out = protowire.AppendTag(out, 100, protowire.BytesType)
		out = protowire.AppendBytes(out, lb)
	}
	return out
}

func params[T float32 | float64](n *net.Net[T]) [][]T {
	var out [][]T
	for _, p := range n.LearnableParams() {
		out = append(out, slices.Clone(p.CPUData()))
		if p.Diff() != nil {
			out = append(out, slices.Clone(p.CPUDiff()))
		}
	}
	return out
}

func equalParams[T float32 | float64](a, b [][]T) bool {
	return slices.EqualFunc(a, b, func(x, y []T) bool {
		return slices.EqualFunc(x, y, func(u, v T) bool { return math.Float64bits(float64(u)) == math.Float64bits(float64(v)) })
	})
}
