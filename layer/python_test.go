package layer_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"google.golang.org/protobuf/proto"
)

// scaleBy is a "Python" layer written in Go: y = k*x, k from param_str.
type scaleBy[T layer.Float] struct {
	layer.Base[T]
	k T
}

func newScaleBy[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	k, err := strconv.ParseFloat(p.GetPythonParam().GetParamStr(), 64)
	if err != nil {
		return nil, err
	}
	l := &scaleBy[T]{k: T(k)}
	return l, l.Init(p)
}

func (*scaleBy[T]) Type() string { return "Python" }
func (*scaleBy[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}
func (*scaleBy[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }
func (*scaleBy[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	return top[0].ReshapeLike(bottom[0])
}
func (l *scaleBy[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	y := top[0].MutableCPUData()
	for i, v := range bottom[0].CPUData() {
		y[i] = l.k * v
	}
	return nil
}
func (l *scaleBy[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if !propagateDown[0] {
		return nil
	}
	dx := bottom[0].MutableCPUDiff()
	for i, v := range top[0].CPUDiff() {
		dx[i] = l.k * v
	}
	return nil
}

const scaleByLayer = `type: "Python" bottom: "x" top: "y" python_param { module: "testmod" layer: "ScaleBy" param_str: "2.5" }`

func init() {
	if err := layer.RegisterPython("testmod.ScaleBy", newScaleBy[float32], newScaleBy[float64]); err != nil {
		panic(err)
	}
	cases.AddGrad(layertest.GradCase{Name: "Python", Layer: scaleByLayer, Bottom: [][]int{{2, 3, 4}}, Mode: layertest.Eltwise})
	cases.AddParity(layertest.Parity{Layer: scaleByLayer, Bottom: [][]int{{2, 3, 4}}})
}

// A Python layer resolves to the Go layer registered as "module.layer",
// and param_str reaches it.
func TestPythonLayer(t *testing.T) {
	l := layertest.New[float64](t, scaleByLayer)
	x := layertest.Blob[float64](t, 2, 3)
	layertest.FillGaussian(x, 0, 1, 3)
	y := layertest.Blob[float64](t)
	layertest.SetUp(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	layertest.Forward(t, l, []*blob.Blob[float64]{x}, []*blob.Blob[float64]{y})
	for i, v := range x.CPUData() {
		if y.CPUData()[i] != 2.5*v {
			t.Fatalf("y[%d] = %v, want 2.5 * %v", i, y.CPUData()[i], v)
		}
	}
	if got := layer.PythonTypes(); !strings.Contains(strings.Join(got, ","), "testmod.ScaleBy") {
		t.Errorf("PythonTypes() = %v", got)
	}
}

func TestPythonLayerErrors(t *testing.T) {
	_, err := layer.New[float32](layertest.Param(t, `name: "loss" type: "Python" python_param { module: "pyloss" layer: "EuclideanLossLayer" }`))
	for _, want := range []string{`layer "loss" (Python)`, `module "pyloss"`, `layer "EuclideanLossLayer"`, `layer.RegisterPython("pyloss.EuclideanLossLayer"`, "testmod.ScaleBy"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("unregistered: err = %v, want it to contain %q", err, want)
		}
	}
	_, err = layer.New[float32](layertest.Param(t, `type: "Python" python_param { layer: "X" }`))
	if err == nil || !strings.Contains(err.Error(), "must name both module and layer") {
		t.Errorf("no module: err = %v", err)
	}
	_, err = layer.New[float32](layertest.Param(t, `type: "Python" python_param { module: "testmod" layer: "ScaleBy" param_str: "two" }`))
	if err == nil || !strings.Contains(err.Error(), `invalid syntax`) {
		t.Errorf("bad param_str: err = %v", err)
	}
	if err := layer.RegisterPython("testmod.ScaleBy", newScaleBy[float32], newScaleBy[float64]); err == nil {
		t.Error("a second registration of one name succeeded")
	}
	for _, bad := range []string{"NoModule", ".L", "m.", ""} {
		if err := layer.RegisterPython(bad, newScaleBy[float32], newScaleBy[float64]); err == nil {
			t.Errorf("RegisterPython(%q) succeeded", bad)
		}
	}
	// A new name each run: the registry outlives a run (-count, -cpu 1,2).
	dottedRuns++
	if err := layer.RegisterPython(fmt.Sprintf("pkg.sub.Layer%d", dottedRuns), newScaleBy[float32], newScaleBy[float64]); err != nil {
		t.Errorf("dotted module: %v", err)
	}
}

// dottedRuns counts TestPythonLayerErrors' runs in this process.
var dottedRuns int

// With a Python runtime installed (package pycaffe does it where it has
// an interpreter), a Python layer no Go layer answers for is built by the
// runtime; a registered Go layer still wins; removing the runtime brings
// back the error.
func TestPythonRuntime(t *testing.T) {
	var built []string
	rt := func(p *caffepb.LayerParameter) (layer.Layer[float32], error) {
		built = append(built, p.GetPythonParam().GetModule()+"."+p.GetPythonParam().GetLayer())
		return newScaleBy[float32](&caffepb.LayerParameter{PythonParam: &caffepb.PythonParameter{ParamStr: proto.String("3")}})
	}
	layer.SetPythonRuntime(rt, nil)
	if _, err := layer.New[float32](layertest.Param(t, `type: "Python" python_param { module: "pyloss" layer: "EuclideanLossLayer" }`)); err == nil {
		t.Error("a runtime without its float64 constructor was used")
	}
	layer.SetPythonRuntime(rt, newScaleBy[float64])
	defer layer.SetPythonRuntime(nil, nil)
	if _, err := layer.New[float32](layertest.Param(t, `type: "Python" python_param { module: "pyloss" layer: "EuclideanLossLayer" }`)); err != nil {
		t.Fatal(err)
	}
	if _, err := layer.New[float32](layertest.Param(t, scaleByLayer)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(built, []string{"pyloss.EuclideanLossLayer"}) {
		t.Errorf("the runtime built %v, want only the unregistered layer", built)
	}
	layer.SetPythonRuntime(nil, nil)
	if _, err := layer.New[float32](layertest.Param(t, `type: "Python" python_param { module: "pyloss" layer: "EuclideanLossLayer" }`)); err == nil || !strings.Contains(err.Error(), "gocaffe runs no Python") {
		t.Errorf("without the runtime: err = %v", err)
	}
}
