package all_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/mathfn"
)

// inPlaceTexts are the layer types that may run in place, each with
// parameters that exercise it.
var inPlaceTexts = map[string]string{
	"ReLU":      `type: "ReLU" relu_param { negative_slope: 0.1 }`,
	"PReLU":     `type: "PReLU"`,
	"Sigmoid":   `type: "Sigmoid"`,
	"TanH":      `type: "TanH"`,
	"BNLL":      `type: "BNLL"`,
	"ELU":       `type: "ELU"`,
	"Exp":       `type: "Exp" exp_param { base: 2 scale: 0.5 }`,
	"Log":       `type: "Log" log_param { shift: 3 }`,
	"Power":     `type: "Power" power_param { power: 2 scale: 0.5 shift: 2 }`,
	"Threshold": `type: "Threshold"`,
	"Dropout":   `type: "Dropout" dropout_param { dropout_ratio: 0.3 }`,
	"Clip":      `type: "Clip" clip_param { min: -0.5 max: 0.5 }`,
	"Swish":     `type: "Swish"`,
	"BatchNorm": `type: "BatchNorm"`,
	"Scale":     `type: "Scale" scale_param { bias_term: true filler { type: "uniform" } bias_filler { type: "uniform" } }`,
	"Bias":      `type: "Bias" bias_param { filler { type: "uniform" } }`,
	"MVN":       `type: "MVN"`,
}

// Every layer type that declares it may run in place gives, in place, the
// top and the bottom gradient it gives out of place; every other built-in
// type declares it may not.
func TestInPlaceEqualsOutOfPlace(t *testing.T) {
	for _, typ := range layer.Types() {
		text, listed := inPlaceTexts[typ]
		if !listed {
			text = fmt.Sprintf(`type: %q`, typ)
		}
		l, err := layer.New[float64](layertest.Param(t, text))
		if err != nil {
			continue // a type that needs parameters to exist; not listed
		}
		if allowed := layer.AllowsInPlace(l); allowed != listed {
			t.Errorf("%s: AllowsInPlace = %v, listed here %v", typ, allowed, listed)
		}
		if !listed {
			continue
		}
		t.Run(typ, func(t *testing.T) {
			run := func(inPlace bool) (y, dx []float64) {
				l := layertest.New[float64](t, text)
				l.LayerBase().SetRNG(mathfn.NewRNG(3))
				x := layertest.Blob[float64](t, 2, 3, 4, 5)
				layertest.FillUniform(x, 0.2, 1.5, 7) // positive: Log's domain
				top := x
				if !inPlace {
					top = layertest.Blob[float64](t)
				}
				layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
				layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{top})
				y = slices.Clone(top.CPUData())
				dy := top.MutableCPUDiff()
				for i := range dy {
					dy[i] = float64(i%7) - 3
				}
				if typ == "Threshold" { // no gradient, as in Caffe
					return y, nil
				}
				if err := layer.Backward(l, []*blob.Blob[float64]{top}, []bool{true}, []*blob.Blob[float64]{x}); err != nil {
					t.Fatal(err)
				}
				return y, slices.Clone(x.CPUDiff())
			}
			y1, dx1 := run(false)
			y2, dx2 := run(true)
			layertest.CheckClose(t, "top in place", y2, y1, 1e-12)
			layertest.CheckClose(t, "bottom diff in place", dx2, dx1, 1e-12)
		})
	}
}
