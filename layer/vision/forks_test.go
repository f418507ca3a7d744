package vision_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	// Upsample's positions: each value of a 2 x 3 plane sent to one of its
	// 2 x 2 cell's four places in the 4 x 6 top, as a pooling mask says.
	mask := func(i int, b *blob.Blob[float64]) {
		if i == 0 {
			layertest.FillGaussian(b, 0, 1, 61)
			return
		}
		x := b.MutableCPUData()
		for k := range x {
			cell := k % 6
			r, c := cell/3, cell%3
			x[k] = float64((2*r+k%2)*6 + 2*c + (k/6)%2)
		}
	}
	cases.AddGrad(
		layertest.GradCase{Name: "Upsample", Layer: `type: "Upsample" upsample_param { scale: 2 }`, Bottom: [][]int{{2, 2, 2, 3}, {2, 2, 2, 3}}, Fill: mask, FirstBottomOnly: true, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "Interp/zoom", Layer: `type: "Interp" interp_param { zoom_factor: 3 }`, Bottom: [][]int{{1, 2, 3, 2}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "Interp/size-crop", Layer: `type: "Interp" interp_param { height: 4 width: 7 pad_beg: -1 pad_end: 0 }`, Bottom: [][]int{{2, 1, 4, 5}}, Mode: layertest.Exhaustive},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "Upsample" upsample_param { upsample_h: 4 upsample_w: 6 }`, Bottom: [][]int{{2, 2, 2, 3}, {2, 2, 2, 3}},
			Fill: func(i int, b []float64) {
				for k := range b {
					if i == 0 {
						b[k] = math.Sin(float64(k))
					} else {
						b[k] = float64((k%6/3*2)*6 + k%6%3*2)
					}
				}
			}},
		layertest.Parity{Layer: `type: "Interp" interp_param { zoom_factor: 4 shrink_factor: 2 }`, Bottom: [][]int{{2, 3, 9, 7}}},
		layertest.Parity{Layer: `type: "Interp" interp_param { height: 5 width: 11 pad_beg: -1 pad_end: -2 }`, Bottom: [][]int{{2, 2, 8, 9}}},
	)
}

// TestUpsampleAfterPooling unpools a MAX pooling's output through its mask:
// each maximum returns to its place, everything else is zero.
func TestUpsampleAfterPooling(t *testing.T) {
	pool := layertest.New[float64](t, `type: "Pooling" pooling_param { pool: MAX kernel_size: 2 stride: 2 }`)
	up := layertest.New[float64](t, `type: "Upsample" upsample_param { scale: 2 }`)
	x := layertest.Blob[float64](t, 1, 1, 4, 4)
	copy(x.MutableCPUData(), []float64{1, 5, 2, 0, 3, 4, 8, 1, 0, 0, 1, 2, 9, 1, 3, 1})
	pooled, mask, out := layertest.Blob[float64](t), layertest.Blob[float64](t), layertest.Blob[float64](t)
	layertest.SetUp(t, pool, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{pooled, mask})
	layertest.Forward(t, pool, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{pooled, mask})
	layertest.SetUp(t, up, []*blob.Blob[float64]{pooled, mask}, []*blob.Blob[float64]{out})
	layertest.Forward(t, up, []*blob.Blob[float64]{pooled, mask}, []*blob.Blob[float64]{out})
	want := []float64{0, 5, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 9, 0, 3, 0}
	if !slices.Equal(out.CPUData(), want) {
		t.Errorf("unpooled %v, want %v", out.CPUData(), want)
	}
}

// TestInterp checks corner-aligned bilinear zooming on a hand case.
func TestInterp(t *testing.T) {
	l := layertest.New[float64](t, `type: "Interp" interp_param { zoom_factor: 2 }`)
	x := layertest.Blob[float64](t, 1, 1, 2, 2)
	copy(x.MutableCPUData(), []float64{0, 1, 2, 3})
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	layertest.CheckClose(t, "Interp", top.CPUData(), []float64{0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3}, 1e-12)
	shrink := layertest.New[float64](t, `type: "Interp" interp_param { shrink_factor: 2 }`)
	big := layertest.Blob[float64](t, 1, 1, 5, 7)
	layertest.SetUp(t, shrink, []*blob.Blob[float64]{big}, []*blob.Blob[float64]{top})
	if !slices.Equal(top.Shape(), []int{1, 1, 3, 4}) {
		t.Errorf("shrink 2 of 5 x 7: %v, want 3 x 4", top.Shape())
	}
}

// An Interp output the process cannot hold is refused by its top, naming
// the layer, before the interpolation tables are made for it (a height of
// a billion rows took 24 GB of tables first).
func TestInterpRefusesHugeOutputs(t *testing.T) {
	l := layertest.New[float32](t, `name: "up" type: "Interp" interp_param { height: 1000000000 width: 1000000000 }`)
	x := layertest.Blob[float32](t, 1, 1, 2, 2)
	err := layer.SetUp(l, []*blob.Blob[float32]{x}, layertest.Blobs[float32](t, 1))
	if err == nil || !strings.Contains(err.Error(), `layer "up" (Interp)`) {
		t.Fatalf("SetUp: %v, want an error naming the layer", err)
	}
}
