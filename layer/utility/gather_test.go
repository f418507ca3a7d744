package utility_test

import (
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"google.golang.org/protobuf/encoding/prototext"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "Gather", Layer: `type: "Gather" bottom: "a" top: "b"`, Bottom: [][]int{{2, 3, 4, 5}}, Mode: layertest.Eltwise, Threshold: 1e-2},
		layertest.GradCase{Name: "Gather/two", Layer: `type: "Gather" bottom: "a" bottom: "b" top: "c" top: "d"`, Bottom: [][]int{{2, 3, 2, 2}, {2, 1}}, Mode: layertest.Exhaustive},
	)
	cases.AddParity(layertest.Parity{Layer: `type: "Gather" bottom: "a" bottom: "b" top: "c" top: "d"`, Bottom: [][]int{{4, 5, 20, 17}, {4, 1}}})
}

// TestGather: each top is its bottom, shape, data and diff, as the fork's
// layer outside MPI.
func TestGather(t *testing.T) {
	l := layertest.New[float64](t, `type: "Gather" bottom: "a" bottom: "b" top: "c" top: "d"`)
	a, b := layertest.Blob[float64](t, 2, 3, 1, 2), layertest.Blob[float64](t, 2)
	copy(a.MutableCPUData(), []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	copy(b.MutableCPUData(), []float64{7, 8})
	ta, tb := layertest.Blob[float64](t), layertest.Blob[float64](t)
	bottom, top := []*blob.Blob[float64]{a, b}, []*blob.Blob[float64]{ta, tb}
	layertest.SetUp(t, l, bottom, top)
	layertest.Forward(t, l, bottom, top)
	if !slices.Equal(ta.CPUData(), a.CPUData()) || !slices.Equal(tb.CPUData(), b.CPUData()) || !slices.Equal(ta.Shape(), a.Shape()) || !slices.Equal(tb.Shape(), b.Shape()) {
		t.Fatalf("tops %s %v, %s %v", ta.ShapeString(), ta.CPUData(), tb.ShapeString(), tb.CPUData())
	}
	copy(tb.MutableCPUDiff(), []float64{-1, -2})
	layertest.Backward(t, l, top, []bool{true, true}, bottom)
	if !slices.Equal(b.CPUDiff(), []float64{-1, -2}) {
		t.Errorf("bottom diff %v, want the top's", b.CPUDiff())
	}
}

// TestGatherInTSNNet builds the part of TSN's fast VGG-16 train net around
// its gather (two bottoms, two tops, the label among them) and trains a
// pass: the layers after it see the bottoms' values.
func TestGatherInTSNNet(t *testing.T) {
	var p caffepb.NetParameter
	if err := prototext.Unmarshal([]byte(`
force_backward: true
layer { name: "data" type: "DummyData" top: "pool5_local" top: "label_local"
  dummy_data_param { shape { dim: 4 dim: 8 dim: 2 dim: 2 } shape { dim: 4 }
    data_filler { type: "gaussian" std: 1 } data_filler { type: "constant" value: 1 } } }
layer { name: "gather" type: "Gather" bottom: "pool5_local" bottom: "label_local" top: "pool5" top: "label" }
layer { name: "fc6" type: "InnerProduct" bottom: "pool5" top: "fc6" inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "fc6" bottom: "label" top: "loss" }`), &p); err != nil {
		t.Fatal(err)
	}
	n, err := net.New[float32](&p, net.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.ForwardBackward(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(n.BlobByName("pool5").CPUData(), n.BlobByName("pool5_local").CPUData()) || !slices.Equal(n.BlobByName("label").CPUData(), []float32{1, 1, 1, 1}) {
		t.Errorf("the gather's tops are not its bottoms")
	}
	if n.BlobByName("pool5_local").AsumDiff() == 0 {
		t.Errorf("no gradient reached the gather's bottom")
	}
}
