package layer

import (
	"fmt"
	"slices"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Spec is everything gocaffe knows about one layer type, in one value that
// its package registers once (RegisterType), next to the type's code: how
// to build it, its engines and the parameter field that chooses among
// them, whether it may run in place, whether its GPU passes replay from a
// CUDA graph, which next layers its engines compute too, how it exports to
// ONNX and whether BVLC Caffe's golden fixtures cover it. Whatever used to
// join layer types by their names (the engine field switch, the CUDA-graph
// allow-list, the fusion pairs, the ONNX exporter's type lists) reads the
// specs instead, so a new layer type touches its spec, its files and its
// tests, and nothing else.
type Spec struct {
	// Type is the LayerParameter.type string, e.g. "ReLU".
	Type string
	// New32 and New64 build a layer of the type from its parameter (only
	// reading it; work that needs the bottoms belongs in LayerSetUp).
	New32 Constructor[float32]
	New64 Constructor[float64]

	// EngineField reads the engine a layer's parameter asks for, from the
	// field Caffe's layer factory reads for the type
	// (convolution_param.engine, ...); nil for a type without one, which
	// always asks for DEFAULT.
	EngineField func(p *caffepb.LayerParameter) EngineName
	// Engines are the type's GPU engines (GPUEngine for gocaffe's own GPU
	// half, a cuDNN engine); on the host every layer runs its CPU half.
	Engines []EngineDef

	// InPlace says the type computes correctly with a top that is also
	// its bottom (top j named as bottom j): Caffe's element-wise layers,
	// Dropout, BatchNorm, Scale, Bias and the like. A net refuses the
	// in-place use of other types rather than letting them compute wrong
	// values.
	InPlace bool
	// CUDAGraph says the type's GPU passes replay faithfully from a
	// recorded CUDA graph: each pass only queues work on the compute
	// stream, waits for nothing, reads nothing back to the host, and hands
	// its kernels no value that changes between passes other than through
	// device memory (a random key through the context's RNG salt). A type
	// not marked may be correct to record too; it is marked once its GPU
	// half has been read for this, because a value baked into a graph
	// fails silently, where a wait or a read-back fails the recording.
	CUDAGraph bool
	// FusesNext lists the types of the next layer whose passes this type's
	// engines can compute as part of their own (Fuse); the type's layers
	// implement Fuser.
	FusesNext []string
	// BackwardReads says which data a layer's backward pass on the host
	// (its CPU half) reads, for its parameter p: its bottoms', its tops',
	// both or neither (its own blobs aside). A host net's memory plan keeps
	// a blob's data only while a later forward pass or some backward pass
	// still reads it, and reuses the memory after. nil says both, which is
	// always safe; saying less than the pass reads makes gradients wrong.
	BackwardReads func(p *caffepb.LayerParameter) BackwardUse

	// BackwardReadsLaterData says that the type's backward pass, run in
	// place, reads its blob's data as the layers after it left it, as
	// Caffe's ReLU reads its bottom (Scale, BatchNorm and Dropout keep
	// copies or masks of their own). A fused engine computes such a layer
	// from values of its own, which give Caffe's gradient only while no
	// later layer writes the blob in place: a net's plan does not fuse it
	// then (BatchNorm, ReLU, then an in-place Sigmoid: Caffe's ReLU
	// gradient passes wherever the sigmoid left a positive value).
	BackwardReadsLaterData bool

	// ONNX says how an exported ONNX model holds the type.
	ONNX ONNXForm
	// ONNXWhy says why, for the forms that leave the layer out or fail.
	ONNXWhy string
	// NoGolden, if not "", says why BVLC Caffe's golden fixtures
	// (tools/golden) do not cover the type: a fork's layer that Caffe does
	// not have, a layer reading files. Every other type has a golden net.
	NoGolden string
}

// ONNXForm is how an exported ONNX model holds a layer of a type.
type ONNXForm int

// The forms. The zero value, ONNXNone, is a type the exporter cannot write.
const (
	// ONNXNone: gocaffe has no ONNX form for the type (ONNXWhy says why);
	// exporting a net with such a layer fails naming it.
	ONNXNone ONNXForm = iota
	// ONNXConverted: the onnx package converts the layer to ONNX nodes.
	ONNXConverted
	// ONNXInput: a data layer; its tops become the model's inputs.
	ONNXInput
	// ONNXDropped: a layer of training or testing only (a loss, an
	// accuracy), left out of the model (ONNXWhy says why).
	ONNXDropped
	// ONNXAlias: the layer's tops are its bottom (Split), or each top
	// its bottom of the same index (TSN's Gather).
	ONNXAlias
)

func (f ONNXForm) String() string {
	switch f {
	case ONNXNone:
		return "none"
	case ONNXConverted:
		return "converted"
	case ONNXInput:
		return "input"
	case ONNXDropped:
		return "dropped"
	case ONNXAlias:
		return "alias"
	}
	return fmt.Sprintf("ONNXForm(%d)", int(f))
}

// EngineDef is one GPU engine of a type, in its Spec: which engine it is,
// what it accepts and how it is made (GPUEngine makes gocaffe's own).
type EngineDef struct {
	// Engine is EngineCaffe (gocaffe's own GPU half) or EngineCuDNN.
	Engine EngineName
	// Accepts, if not nil, says whether the engine can run a layer of
	// parameter p on ctx (see EngineSpec.Accepts).
	Accepts func(p *caffepb.LayerParameter, ctx *device.Context) error
	// Fallback: see EngineSpec.Fallback.
	Fallback bool
	// New32 and New64 make the engine of a layer of the type.
	New32 EngineConstructor[float32]
	New64 EngineConstructor[float64]
}

// GPUEngine is the EngineDef of gocaffe's own GPU half of a layer type:
// new32 and new64 make it from a layer of the type. A Spec lists it as
//
//	Engines: []layer.EngineDef{layer.GPUEngine(newReLUGPU[float32], newReLUGPU[float64])}
func GPUEngine[L32 Layer[float32], L64 Layer[float64]](new32 func(L32) Engine[float32], new64 func(L64) Engine[float64]) EngineDef {
	return EngineDef{Engine: EngineCaffe,
		New32: func(l Layer[float32], _ *device.Context) (Engine[float32], error) { return new32(l.(L32)), nil },
		New64: func(l Layer[float64], _ *device.Context) (Engine[float64], error) { return new64(l.(L64)), nil }}
}

// RegisterType makes a layer type available to New (and so to nets)
// with everything its spec says. Packages of layers register their types
// in an init function; registering a type twice is an error.
func RegisterType(s Spec) error {
	if s.Type == "" || s.New32 == nil || s.New64 == nil {
		return fmt.Errorf("layer: RegisterType(%q) needs a type name and both constructors", s.Type)
	}
	for _, e := range s.Engines {
		if e.New32 == nil || e.New64 == nil {
			return fmt.Errorf("layer: RegisterType(%q): engine %v needs both constructors", s.Type, e.Engine)
		}
	}
	s.Engines = slices.Clone(s.Engines)
	s.FusesNext = slices.Clone(s.FusesNext)
	if err := registry.add(s.Type, &s, "type"); err != nil {
		return err
	}
	for _, e := range s.Engines {
		spec := EngineSpec{Type: s.Type, Engine: e.Engine, Accepts: e.Accepts, Fallback: e.Fallback}
		if err := RegisterEngine(spec, e.New32, e.New64); err != nil {
			return err
		}
	}
	return nil
}

// MustRegisterType is RegisterType for a package's own types, whose names
// it knows to be free: a clash is a programming error and panics.
func MustRegisterType(s Spec) {
	if err := RegisterType(s); err != nil {
		panic(err)
	}
}

// SpecOf returns the spec of a registered type.
func SpecOf(typ string) (Spec, bool) {
	s := registry.get(typ)
	if s == nil {
		return Spec{}, false
	}
	return *s, true
}

// Specs returns the specs of the registered types, sorted by type.
func Specs() []Spec {
	var out []Spec
	for _, t := range Types() {
		if s, ok := SpecOf(t); ok {
			out = append(out, s)
		}
	}
	return out
}

// specOf returns the spec of l's type, or nil for a layer not made by the
// registry (a test's own type).
func specOf[T Float](l Layer[T]) *Spec { return registry.get(l.Type()) }
