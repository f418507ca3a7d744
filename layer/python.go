package layer

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

var pythonRegistry = nameMap[constructors]{m: map[string]constructors{}}

// RegisterPython makes the Go layer built by f32/f64 answer for Caffe's
// Python layers whose python_param names this module and layer, given as
// "module.layer" (e.g. "pyloss.EuclideanLossLayer"). Registering a name
// twice is an error.
//
// Caffe's Python layer runs a class written in Python:
//
//	layer { type: "Python" python_param { module: "pyloss" layer: "EuclideanLossLayer" param_str: "..." } }
//
// Without a Python interpreter (SetPythonRuntime) gocaffe runs no Python: a
// net file with such layers runs unchanged once each class is written in
// Go and registered under "module.layer":
//
//	layer.RegisterPython("pyloss.EuclideanLossLayer", newEuclid[float32], newEuclid[float64])
//
// The constructor receives the whole LayerParameter, param_str included
// (p.GetPythonParam().GetParamStr()); the layer is an ordinary Layer (its
// LayerSetUp is Python's setup, Reshape reshape, and so on) and may take any
// number of bottoms and tops. As in Caffe, a Python layer is no loss layer
// unless its prototxt gives a loss_weight (or the Go layer embeds
// LossBase).
func RegisterPython(name string, f32 Constructor[float32], f64 Constructor[float64]) error {
	dot := strings.LastIndex(name, ".") // modules may be dotted: "pkg.mod.Layer"
	if dot <= 0 || dot == len(name)-1 || f32 == nil || f64 == nil {
		return fmt.Errorf("layer: RegisterPython(%q) needs a \"module.layer\" name and both constructors", name)
	}
	return pythonRegistry.add(name, constructors{f32, f64}, "Python layer")
}

// pythonRuntime builds the Python layers that no Go layer answers for,
// when a Python interpreter is there to run them (SetPythonRuntime).
var pythonRuntime struct {
	sync.RWMutex
	c constructors
}

// SetPythonRuntime makes f32/f64 build every Python layer whose
// "module.layer" no Go layer is registered for (RegisterPython wins): they
// run the class in Python. Package pycaffe, built with the python tag,
// calls it when it has an interpreter (inside Python, or the gocaffe
// command built with the tag); without it such a layer is an error saying
// how to write it in Go. nil constructors remove the runtime.
func SetPythonRuntime(f32 Constructor[float32], f64 Constructor[float64]) {
	pythonRuntime.Lock()
	defer pythonRuntime.Unlock()
	pythonRuntime.c = constructors{f32, f64}
}

// PythonTypes returns the registered "module.layer" names, sorted.
func PythonTypes() []string {
	pythonRegistry.RLock()
	defer pythonRegistry.RUnlock()
	names := make([]string, 0, len(pythonRegistry.m))
	for n := range pythonRegistry.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// pythonConstructors returns the constructors registered for p's
// python_param, or an error saying how to register them.
func pythonConstructors(p *caffepb.LayerParameter) (constructors, error) {
	pp := p.GetPythonParam()
	name := pp.GetModule() + "." + pp.GetLayer()
	if pp.GetModule() == "" || pp.GetLayer() == "" {
		return constructors{}, fmt.Errorf("python_param must name both module and layer (got module %q, layer %q)", pp.GetModule(), pp.GetLayer())
	}
	c := pythonRegistry.get(name)
	if c.f32 == nil {
		pythonRuntime.RLock()
		rt := pythonRuntime.c
		pythonRuntime.RUnlock()
		if rt.f32 != nil && rt.f64 != nil {
			return rt, nil
		}
		known := "none"
		if names := PythonTypes(); len(names) > 0 {
			known = strings.Join(names, ", ")
		}
		return constructors{}, fmt.Errorf("python_param names module %q, layer %q, and gocaffe runs no Python in this build: build it with -tags python (the gocaffe command; docs/python.md) to run the class in Python, or write the layer in Go and register it with layer.RegisterPython(%q, newLayer[float32], newLayer[float64]) (registered Python layers: %s)",
			pp.GetModule(), pp.GetLayer(), name, known)
	}
	return c, nil
}

func newPython[T Float](p *caffepb.LayerParameter) (Layer[T], error) {
	c, err := pythonConstructors(p)
	if err != nil {
		return nil, err
	}
	return construct[T](c, p)
}

func init() {
	MustRegisterType(Spec{
		Type:  "Python",
		New32: newPython[float32], New64: newPython[float64],
		// Caffe lets any layer compute in place; whether a Python layer
		// can is its author's business, as in Caffe.
		InPlace:  true,
		ONNXWhy:  "a Python layer",
		NoGolden: "it runs the Go layer registered for a Python class, which the golden nets do not",
	})
}
