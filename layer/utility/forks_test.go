package utility_test

import (
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	cases.AddGrad(
		layertest.GradCase{Name: "Axpy", Layer: `type: "Axpy"`, Bottom: [][]int{{2, 3, 1, 1}, {2, 3, 4, 5}, {2, 3, 4, 5}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "Axpy/2-axis-a", Layer: `type: "Axpy"`, Bottom: [][]int{{2, 3}, {2, 3, 2, 2}, {2, 3, 2, 2}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "Permute", Layer: `type: "Permute" permute_param { order: 0 order: 2 order: 3 order: 1 }`, Bottom: [][]int{{2, 3, 4, 5}}, Mode: layertest.Exhaustive},
		layertest.GradCase{Name: "Permute/partial", Layer: `type: "Permute" permute_param { order: 2 }`, Bottom: [][]int{{2, 3, 4}}, Mode: layertest.Exhaustive},
	)
	cases.AddParity(
		layertest.Parity{Layer: `type: "Axpy"`, Bottom: [][]int{{2, 3, 1, 1}, {2, 3, 4, 5}, {2, 3, 4, 5}}},
		layertest.Parity{Layer: `type: "Permute" permute_param { order: 0 order: 3 order: 1 order: 2 }`, Bottom: [][]int{{2, 3, 4, 5}}},
	)
}

func TestAxpyForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "Axpy"`)
	a, x, y := layertest.Blob[float64](t, 1, 2, 1, 1), layertest.Blob[float64](t, 1, 2, 1, 2), layertest.Blob[float64](t, 1, 2, 1, 2)
	copy(a.MutableCPUData(), []float64{2, -1})
	copy(x.MutableCPUData(), []float64{1, 2, 3, 4})
	copy(y.MutableCPUData(), []float64{10, 20, 30, 40})
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{a, x, y}, []*blob.Blob[float64]{top})
	layertest.Forward(t, l, []*blob.Blob[float64]{a, x, y}, []*blob.Blob[float64]{top})
	if got, want := top.CPUData(), []float64{12, 24, 27, 36}; !slices.Equal(got, want) {
		t.Errorf("Axpy: %v, want %v", got, want)
	}
}

func TestPermuteForward(t *testing.T) {
	l := layertest.New[float64](t, `type: "Permute" permute_param { order: 0 order: 2 order: 3 order: 1 }`)
	x := layertest.Blob[float64](t, 2, 3, 2, 4)
	for i := range x.MutableCPUData() {
		x.MutableCPUData()[i] = float64(i)
	}
	top := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
	if !slices.Equal(top.Shape(), []int{2, 2, 4, 3}) {
		t.Fatalf("shape %v, want 2 2 4 3", top.Shape())
	}
	y := top.CPUData()
	for n := range 2 {
		for h := range 2 {
			for w := range 4 {
				for c := range 3 {
					got, want := y[((n*2+h)*4+w)*3+c], float64(((n*3+c)*2+h)*4+w)
					if got != want {
						t.Fatalf("top[%d,%d,%d,%d] = %v, want bottom[%d,%d,%d,%d] = %v", n, h, w, c, got, n, c, h, w, want)
					}
				}
			}
		}
	}
	bad := layertest.New[float64](t, `type: "Permute" permute_param { order: 1 order: 1 }`)
	if err := layerSetUpErr(bad, x); err == nil {
		t.Error("an order naming an axis twice was accepted")
	}
}

func layerSetUpErr(l interface{}, x *blob.Blob[float64]) error {
	type setUpper interface {
		LayerSetUp(bottom, top []*blob.Blob[float64]) error
	}
	return l.(setUpper).LayerSetUp([]*blob.Blob[float64]{x}, []*blob.Blob[float64]{layertestBlob()})
}

func layertestBlob() *blob.Blob[float64] { b, _ := blob.New[float64](); return b }
