package datalayer_test

import (
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/datalayer"

	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

const memoryText = `type: "MemoryData" memory_data_param { batch_size: 2 channels: 1 height: 1 width: 3 }`

func setUpMemory(t *testing.T) (*datalayer.MemoryData[float64], []*blob.Blob[float64]) {
	t.Helper()
	l := layertest.New[float64](t, memoryText)
	top := layertest.Blobs[float64](t, 2)
	layertest.SetUp(t, l, nil, top)
	return l.(*datalayer.MemoryData[float64]), top
}

// TestMemoryDataServesBatchesInTurn follows Caffe's MemoryDataLayer: each
// Forward serves the next batch, wrapping after the last, Reset restarts,
// and the caller's arrays are not written through the tops.
func TestMemoryDataServesBatchesInTurn(t *testing.T) {
	l, top := setUpMemory(t)
	if !slices.Equal(top[0].Shape(), []int{2, 1, 1, 3}) || !slices.Equal(top[1].Shape(), []int{2}) {
		t.Fatalf("tops shaped %v and %v", top[0].Shape(), top[1].Shape())
	}
	items := make([]float64, 18)
	for i := range items {
		items[i] = float64(i)
	}
	labels := []float64{10, 11, 12, 13, 14, 15}
	if err := l.Reset(items, labels, 6); err != nil {
		t.Fatal(err)
	}
	for pass, first := range []int{0, 2, 4, 0, 2} {
		layertest.Forward(t, l, nil, top)
		layertest.CheckClose(t, "data", top[0].CPUData(), items[first*3:(first+2)*3], 0)
		layertest.CheckClose(t, "labels", top[1].CPUData(), labels[first:first+2], 0)
		if pass == 0 && !slices.Equal(top[1].Shape(), []int{2, 1, 1, 1}) {
			t.Errorf("label top shaped %v after Forward, want Caffe's [2 1 1 1]", top[1].Shape())
		}
	}
	top[0].MutableCPUData()[0] = -1
	if items[6] != 6 {
		t.Error("writing the top changed the caller's array")
	}
	if err := l.Reset(items[6:], labels[2:], 2); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		layertest.Forward(t, l, nil, top)
		layertest.CheckClose(t, "after Reset", top[0].CPUData(), items[6:12], 0)
	}
	if n := testing.AllocsPerRun(20, func() { layer.Forward[float64](l, nil, top) }); n != 0 {
		t.Errorf("Forward allocates %v times", n)
	}
}

func TestMemoryDataErrors(t *testing.T) {
	l, top := setUpMemory(t)
	_, err := layer.Forward[float64](l, nil, top)
	wantError(t, "Forward before Reset", err, `layer "MemoryData" (MemoryData)`, "initialized by calling Reset")
	data, labels := make([]float64, 12), make([]float64, 4)
	wantError(t, "n not a multiple", l.Reset(data, labels, 3), `layer "MemoryData"`, "multiple of batch size 2, got 3")
	wantError(t, "n zero", l.Reset(data, labels, 0), "multiple of batch size")
	wantError(t, "short data", l.Reset(data[:11], labels, 4), "need 12 data values, got 11")
	wantError(t, "short labels", l.Reset(data, labels[:3], 4), "need 4 labels, got 3")
	wantError(t, "no channels", setUpError(t, `type: "MemoryData" memory_data_param { batch_size: 2 height: 1 width: 3 }`, 2),
		"batch_size, channels, height, and width must be specified and positive")
	var unset datalayer.MemoryData[float32]
	wantError(t, "Reset before SetUp", unset.Reset(nil, nil, 2), "Reset before SetUp")
}
