package layer

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Engine computes a layer's passes on one device: the strategy SetUp
// chooses for the layer (see "Engines" in the package documentation). A
// layer type keeps its parameters and shapes; its engines hold the compute.
type Engine[T Float] interface {
	// Forward computes the tops from the bottoms (as Layer.ForwardCPU).
	Forward(bottom, top []*blob.Blob[T]) error
	// Backward computes the gradients (as Layer.BackwardCPU).
	Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error
}

// EngineReshaper is implemented by engines with state of their own that
// depends on the shapes (a batched convolution's buffers, a cuDNN
// descriptor): Reshaped runs after the layer's Reshape, at SetUp and before
// every forward pass. (The name differs from Reshape so that an engine that
// embedded its layer would not take the layer's Reshape for its own.)
type EngineReshaper[T Float] interface {
	Reshaped(bottom, top []*blob.Blob[T]) error
}

// EngineName is the value of the engine fields of Caffe's layer parameters
// (convolution_param.engine, pooling_param.engine, ...): the same numbers
// for every one of them.
type EngineName int32

// The engines, as Caffe names them.
const (
	EngineDefault EngineName = 0 // DEFAULT: the best engine that takes the layer
	EngineCaffe   EngineName = 1 // CAFFE: gocaffe's own code
	EngineCuDNN   EngineName = 2 // CUDNN: NVIDIA's cuDNN
)

func (e EngineName) String() string {
	switch e {
	case EngineDefault:
		return "DEFAULT"
	case EngineCaffe:
		return "CAFFE"
	case EngineCuDNN:
		return "CUDNN"
	}
	return fmt.Sprintf("EngineName(%d)", int32(e))
}

// EngineSpec describes a registered engine. Registered engines run on a GPU
// context; on the host every layer runs its own CPU half (ForwardCPU and
// BackwardCPU), Caffe's engine on the host.
type EngineSpec struct {
	// Type is the layer type the engine computes, e.g. "Convolution".
	Type string
	// Engine is EngineCaffe (gocaffe's own GPU half) or EngineCuDNN.
	Engine EngineName
	// Accepts, if not nil, says whether the engine can run a layer of
	// parameter p on ctx: nil if it can, or an error saying why not (Caffe's
	// cuDNN convolution takes no dilation). It must only read p.
	Accepts func(p *caffepb.LayerParameter, ctx *device.Context) error
	// Fallback, for an engine asked for by name that does not accept the
	// layer: true uses Caffe's engine instead, with one line in the log
	// (as Caffe's cuDNN pooling does for several tops); false is an error
	// (as Caffe's cuDNN convolution does for dilation).
	Fallback bool
}

// EngineConstructor makes the engine of layer l, of the spec's type, on
// its context. It runs at SetUp, after the layer's LayerSetUp, so the
// layer's parameters are read; the layer's GPU view (Base.gpu) is made.
type EngineConstructor[T Float] func(l Layer[T], ctx *device.Context) (Engine[T], error)

// engines is the registry of engines, by layer type and engine name.
var engines = struct {
	sync.RWMutex
	m map[engineKey]*engineEntry
}{m: map[engineKey]*engineEntry{}}

type engineEntry struct {
	spec EngineSpec
	f32  EngineConstructor[float32]
	f64  EngineConstructor[float64]
}

func (e *engineEntry) accepts(p *caffepb.LayerParameter, ctx *device.Context) error {
	if e.spec.Accepts == nil {
		return nil
	}
	return e.spec.Accepts(p, ctx)
}

// RegisterEngine adds an engine for a layer type, which need not be
// registered yet. Each type has at most one engine of each name.
func RegisterEngine(spec EngineSpec, f32 EngineConstructor[float32], f64 EngineConstructor[float64]) error {
	if spec.Type == "" || f32 == nil || f64 == nil {
		return fmt.Errorf("layer: RegisterEngine(%q) needs a type name and both constructors", spec.Type)
	}
	if spec.Engine != EngineCaffe && spec.Engine != EngineCuDNN {
		return fmt.Errorf("layer: RegisterEngine(%q): engine %v, want CAFFE or CUDNN", spec.Type, spec.Engine)
	}
	engines.Lock()
	defer engines.Unlock()
	key := engineKey{spec.Type, spec.Engine}
	if _, dup := engines.m[key]; dup {
		return fmt.Errorf("layer: engine %v of type %q is already registered", spec.Engine, spec.Type)
	}
	engines.m[key] = &engineEntry{spec, f32, f64}
	return nil
}

type engineKey struct {
	typ    string
	engine EngineName
}

func lookupEngine(typ string, e EngineName) *engineEntry {
	engines.RLock()
	defer engines.RUnlock()
	return engines.m[engineKey{typ, e}]
}

// engineField returns the engine a layer's parameter asks for, through
// its type's Spec.EngineField; DEFAULT for the types that have none.
func engineField(p *caffepb.LayerParameter) EngineName {
	if s := registry.get(p.GetType()); s != nil && s.EngineField != nil {
		return s.EngineField(p)
	}
	return EngineDefault
}

// pickEngine applies Caffe's layer factory rules to the registered engines
// of p's type, for a layer on a GPU (onGPU) or on the host. nil means the
// layer's own CPU half. DEFAULT takes the best engine that accepts the
// layer (cuDNN, then Caffe's GPU half, then the CPU half), CAFFE takes
// gocaffe's own, and CUDNN takes cuDNN's; a layer cuDNN does not accept is
// an error, unless its spec falls back (both as in Caffe). Where gocaffe
// has no cuDNN engine for the type, CUDNN falls back to Caffe's with a
// warning, where a Caffe built without cuDNN fails ("unknown engine"): a
// net written for a cuDNN Caffe runs unchanged. On the host a layer asked
// for as CUDNN runs its CPU half, as Caffe's cuDNN layers run their Caffe
// parent's in CPU mode.
func pickEngine(p *caffepb.LayerParameter, ctx *device.Context, onGPU bool, log *slog.Logger) (*engineEntry, error) {
	typ := p.GetType()
	caffe, cudnn := lookupEngine(typ, EngineCaffe), lookupEngine(typ, EngineCuDNN)
	gpuCaffe := func() *engineEntry {
		if onGPU && caffe != nil && caffe.accepts(p, ctx) == nil {
			return caffe
		}
		return nil
	}
	switch want := engineField(p); want {
	case EngineDefault:
		if onGPU && cudnn != nil && cudnn.accepts(p, ctx) == nil {
			return cudnn, nil
		}
		return gpuCaffe(), nil
	case EngineCaffe:
		return gpuCaffe(), nil
	case EngineCuDNN:
		if cudnn == nil {
			logf.Warnf(log, "Layer %s: engine CUDNN, but gocaffe has no cuDNN engine for %s layers; using Caffe's own engine", p.GetName(), typ)
			return gpuCaffe(), nil
		}
		if err := cudnn.accepts(p, ctx); err != nil {
			if !cudnn.spec.Fallback {
				return nil, fmt.Errorf("engine CUDNN cannot run this layer: %w", err)
			}
			logf.Infof(log, "Layer %s: engine CUDNN cannot run it (%v); using Caffe's own engine", p.GetName(), err)
			return gpuCaffe(), nil
		}
		if !onGPU {
			return nil, nil
		}
		return cudnn, nil
	default:
		return nil, fmt.Errorf("unknown engine %v", want)
	}
}

// hostEngine is every layer's engine on the host: its own CPU half.
type hostEngine[T Float] struct{ l Layer[T] }

func (e hostEngine[T]) Forward(bottom, top []*blob.Blob[T]) error { return e.l.ForwardCPU(bottom, top) }

func (e hostEngine[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return e.l.BackwardCPU(top, propagateDown, bottom)
}

// chooseEngine picks and makes the layer's engine for its context.
func chooseEngine[T Float](l Layer[T]) error {
	b := l.LayerBase()
	b.engine, b.reshaper, b.engineOnGPU, b.engineName = nil, nil, false, EngineCaffe
	entry, err := pickEngine(b.param, b.ctx, b.ctx.OnGPU(), b.Logger())
	if err != nil {
		return err
	}
	if entry == nil {
		b.engine = hostEngine[T]{l}
		return nil
	}
	if err := b.makeView(); err != nil {
		return err
	}
	var e any
	switch l := any(l).(type) {
	case Layer[float32]:
		e, err = entry.f32(l, b.ctx)
	case Layer[float64]:
		e, err = entry.f64(l, b.ctx)
	}
	if err != nil {
		return fmt.Errorf("engine %v: %w", entry.spec.Engine, err)
	}
	b.engine = e.(Engine[T])
	b.reshaper, _ = e.(EngineReshaper[T])
	b.engineOnGPU = true
	b.engineName = entry.spec.Engine
	return nil
}

// EngineName returns the engine the layer runs on since SetUp: CUDNN for
// a cuDNN engine, CAFFE for gocaffe's own code on either device.
func (b *Base[T]) EngineName() EngineName { return b.engineName }

// NewEngine makes engine name of l's type for l's context, whatever its
// parameter asks for: a cuDNN engine makes gocaffe's own (EngineCaffe)
// to hand it the shapes cuDNN does not compute as Caffe does.
func NewEngine[T Float](l Layer[T], name EngineName) (Engine[T], error) {
	entry := lookupEngine(l.Type(), name)
	if entry == nil {
		return nil, fmt.Errorf("no %v engine for %s", name, l.Type())
	}
	var e any
	var err error
	switch l := any(l).(type) {
	case Layer[float32]:
		e, err = entry.f32(l, l.LayerBase().Context())
	case Layer[float64]:
		e, err = entry.f64(l, l.LayerBase().Context())
	}
	if err != nil {
		return nil, err
	}
	return e.(Engine[T]), nil
}
