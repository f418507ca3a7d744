package utility_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

func init() {
	const ip = `type: "InnerProduct" bottom: "x" top: "y" inner_product_param { num_output: 10
	  weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } %s }`
	cases.AddGrad(
		layertest.GradCase{Name: "InnerProduct", Layer: fmt.Sprintf(ip, ""), Bottom: [][]int{{2, 3, 4, 5}}},
		layertest.GradCase{Name: "InnerProduct/transpose", Layer: fmt.Sprintf(ip, "transpose: true"), Bottom: [][]int{{2, 3, 4, 5}}},
		layertest.GradCase{Name: "InnerProduct/axis2", Layer: fmt.Sprintf(ip, "axis: 2"), Bottom: [][]int{{2, 3, 4, 5}}},
	)
	cases.AddParity(
		layertest.Parity{Layer: fmt.Sprintf(ip, ""), Bottom: [][]int{{7, 3, 8, 5}}},
		layertest.Parity{Layer: fmt.Sprintf(ip, "transpose: true axis: -1"), Bottom: [][]int{{4, 3, 20}}},
	)
}

// naiveInnerProduct computes y[m][n] = sum_k x[m][k] * W[n][k] + b[n].
func naiveInnerProduct(x, w, b []float64, m, n, k int, transpose bool) []float64 {
	y := make([]float64, m*n)
	for i := range m {
		for j := range n {
			s := b[j]
			for p := range k {
				wv := w[j*k+p]
				if transpose {
					wv = w[p*n+j]
				}
				s += x[i*k+p] * wv
			}
			y[i*n+j] = s
		}
	}
	return y
}

func TestInnerProductForward(t *testing.T) {
	for _, c := range []struct {
		extra     string
		m, k      int
		topShape  string
		transpose bool
	}{
		{"", 2, 60, "2 10 (20)", false},
		{"transpose: true", 2, 60, "2 10 (20)", true},
		{"axis: 2", 6, 20, "2 3 10 (60)", false},
		{"axis: -1", 24, 5, "2 3 4 10 (240)", false},
	} {
		l := layertest.New[float64](t, `type: "InnerProduct" inner_product_param { num_output: 10 `+c.extra+`
		  weight_filler { type: "uniform" } bias_filler { type: "uniform" min: 1 max: 2 } }`)
		x := layertest.Blob[float64](t, 2, 3, 4, 5)
		layertest.FillUniform(x, 0, 1, 1)
		y := layertest.Blob[float64](t)
		layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
		if y.ShapeString() != c.topShape {
			t.Errorf("%q: top %s, want %s", c.extra, y.ShapeString(), c.topShape)
			continue
		}
		b := l.LayerBase().Blobs()
		want := naiveInnerProduct(x.CPUData(), b[0].CPUData(), b[1].CPUData(), c.m, 10, c.k, c.transpose)
		layertest.CheckClose(t, "inner product "+c.extra, y.CPUData(), want, 1e-12)
	}
}

func TestInnerProductErrors(t *testing.T) {
	if _, err := layer.New[float32](layertest.Param(t, `name: "fc" type: "InnerProduct"`)); err == nil || !strings.Contains(err.Error(), "num_output") {
		t.Errorf("missing num_output: err = %v", err)
	}
	l := layertest.New[float32](t, `name: "fc" type: "InnerProduct" inner_product_param { num_output: 3 }`)
	x, y := layertest.Blob[float32](t, 2, 4), layertest.Blob[float32](t)
	layertest.SetUp(t, l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
	x.Reshape([]int{2, 5})
	_, err := layer.Forward(l, []*blob.Blob[float32]{x}, []*blob.Blob[float32]{y})
	if err == nil || !strings.Contains(err.Error(), "input size incompatible") || !strings.Contains(err.Error(), `"fc"`) {
		t.Errorf("changed input size: err = %v", err)
	}
}
