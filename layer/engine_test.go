package layer

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// fakeCuDNN registers a cuDNN engine for Convolution that, like Caffe's,
// takes no dilation, and removes it when the test ends (the layer tests
// run one at a time, so no other test sees it).
func fakeCuDNN(t *testing.T, fallback bool) *engineEntry {
	t.Helper()
	noDilation := func(p *caffepb.LayerParameter, _ *device.Context) error {
		for _, d := range p.GetConvolutionParam().GetDilation() {
			if d > 1 {
				return errors.New("cuDNN doesn't support the dilated convolution")
			}
		}
		return nil
	}
	never := func(Layer[float32], *device.Context) (Engine[float32], error) { return nil, errors.New("not made") }
	never64 := func(Layer[float64], *device.Context) (Engine[float64], error) { return nil, errors.New("not made") }
	// EngineTest: a type with the engine field and no real cuDNN engine.
	spec := EngineSpec{Type: "EngineTest", Engine: EngineCuDNN, Accepts: noDilation, Fallback: fallback}
	if err := RegisterEngine(spec, never, never64); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		engines.Lock()
		delete(engines.m, engineKey{"EngineTest", EngineCuDNN})
		engines.Unlock()
	})
	return lookupEngine("EngineTest", EngineCuDNN)
}

func convParam(t *testing.T, engine string, dilation int) *caffepb.LayerParameter {
	t.Helper()
	p := &caffepb.LayerParameter{}
	text := `name: "conv" type: "Convolution" convolution_param { num_output: 2 kernel_size: 3 engine: ` + engine
	if dilation > 1 {
		text += ` dilation: 2`
	}
	if err := prototext.Unmarshal([]byte(text+` }`), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// The engine chosen for each engine field, on the host and on a GPU, with
// and without a cuDNN engine: Caffe's layer factory rules.
func TestPickEngine(t *testing.T) {
	caffe := lookupEngine("EngineTest", EngineCaffe)
	if caffe == nil {
		t.Fatal("Deconvolution has no CAFFE GPU engine registered")
	}
	type want struct {
		entry *engineEntry
		err   string
	}
	check := func(t *testing.T, name string, p *caffepb.LayerParameter, onGPU bool, w want) {
		t.Helper()
		got, err := pickEngine(p, nil, onGPU, slog.New(slog.DiscardHandler))
		switch {
		case w.err != "" && (err == nil || !strings.Contains(err.Error(), w.err)):
			t.Errorf("%s: err = %v, want one containing %q", name, err, w.err)
		case w.err == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case got != w.entry:
			t.Errorf("%s: picked %v, want %v", name, describe(got), describe(w.entry))
		}
	}
	t.Run("without cuDNN", func(t *testing.T) {
		for _, onGPU := range []bool{false, true} {
			gpuCaffe := (*engineEntry)(nil)
			if onGPU {
				gpuCaffe = caffe
			}
			check(t, "DEFAULT", deconvParam(t, "DEFAULT", 1), onGPU, want{entry: gpuCaffe})
			check(t, "CAFFE", deconvParam(t, "CAFFE", 1), onGPU, want{entry: gpuCaffe})
			check(t, "CUDNN", deconvParam(t, "CUDNN", 1), onGPU, want{entry: gpuCaffe}) // with a warning
		}
	})
	t.Run("with cuDNN", func(t *testing.T) {
		cudnn := fakeCuDNN(t, false)
		check(t, "GPU DEFAULT", deconvParam(t, "DEFAULT", 1), true, want{entry: cudnn})
		check(t, "GPU DEFAULT dilated", deconvParam(t, "DEFAULT", 2), true, want{entry: caffe})
		check(t, "GPU CAFFE", deconvParam(t, "CAFFE", 1), true, want{entry: caffe})
		check(t, "GPU CUDNN", deconvParam(t, "CUDNN", 1), true, want{entry: cudnn})
		check(t, "GPU CUDNN dilated", deconvParam(t, "CUDNN", 2), true, want{err: "engine CUDNN cannot run this layer: cuDNN doesn't support the dilated convolution"})
		check(t, "host DEFAULT", deconvParam(t, "DEFAULT", 1), false, want{})
		check(t, "host CUDNN", deconvParam(t, "CUDNN", 1), false, want{})
		check(t, "host CUDNN dilated", deconvParam(t, "CUDNN", 2), false, want{err: "dilated"})
	})
	t.Run("with cuDNN falling back", func(t *testing.T) {
		fakeCuDNN(t, true)
		check(t, "GPU CUDNN dilated", deconvParam(t, "CUDNN", 2), true, want{entry: caffe})
		check(t, "host CUDNN dilated", deconvParam(t, "CUDNN", 2), false, want{})
	})
	t.Run("no GPU half", func(t *testing.T) {
		p := &caffepb.LayerParameter{Name: proto.String("f"), Type: proto.String("EngineTestHost")}
		check(t, "GPU DEFAULT", p, true, want{})
	})
}

// deconvParam is convParam for a Deconvolution layer.
func deconvParam(t *testing.T, engine string, dilation int) *caffepb.LayerParameter {
	p := convParam(t, engine, dilation)
	p.Type = proto.String("EngineTest")
	return p
}

func describe(e *engineEntry) string {
	if e == nil {
		return "the CPU half"
	}
	return e.spec.Type + " " + e.spec.Engine.String()
}

// Asking for cuDNN where gocaffe has none sets the layer up with Caffe's
// engine and one warning naming the layer.
func TestCuDNNRequestedWithoutCuDNN(t *testing.T) {
	var log bytes.Buffer
	// Deconvolution has the engine field but no cuDNN engine here.
	p := convParam(t, "CUDNN", 1)
	p.Type = proto.String("EngineTest")
	l, err := New[float64](p)
	if err != nil {
		t.Fatal(err)
	}
	l.LayerBase().SetLogger(slog.New(glog.NewHandler(&log)))
	bottom, _ := blob.New[float64](1, 1, 5, 5)
	top, _ := blob.New[float64]()
	if err := SetUp(l, []*blob.Blob[float64]{bottom}, []*blob.Blob[float64]{top}); err != nil {
		t.Fatal(err)
	}
	want := "Layer conv: engine CUDNN, but gocaffe has no cuDNN engine for EngineTest layers; using Caffe's own engine"
	if got := log.String(); strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "W") || !strings.Contains(got, want) {
		t.Errorf("log %q, want one warning %q", got, want)
	}
}

func TestRegisterEngineRefuses(t *testing.T) {
	f32 := func(Layer[float32], *device.Context) (Engine[float32], error) { return nil, nil }
	f64 := func(Layer[float64], *device.Context) (Engine[float64], error) { return nil, nil }
	for _, c := range []struct {
		spec EngineSpec
		err  string
	}{
		{EngineSpec{Type: "EngineTest", Engine: EngineCaffe}, `engine CAFFE of type "EngineTest" is already registered`},
		{EngineSpec{Type: "EngineTest", Engine: EngineDefault}, "want CAFFE or CUDNN"},
		{EngineSpec{Engine: EngineCuDNN}, "needs a type name"},
	} {
		if err := RegisterEngine(c.spec, f32, f64); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("RegisterEngine(%+v): err = %v, want %q", c.spec, err, c.err)
		}
	}
}

// engineTestLayer is a layer type of these tests' own, with the
// convolution's engine field and a GPU half of gocaffe's own: what
// Caffe's factory rules are checked on, with no package of layers.
// EngineTestHost is the same with no GPU half.
type engineTestLayer[T Float] struct {
	Base[T]
	typ string
}

func (l *engineTestLayer[T]) Type() string { return l.typ }
func (*engineTestLayer[T]) Counts() BlobCounts {
	return BlobCounts{Bottom: Exactly(1), Top: Exactly(1)}
}
func (*engineTestLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }
func (*engineTestLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	return top[0].ReshapeLike(bottom[0])
}
func (*engineTestLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error { return nil }
func (*engineTestLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}

func newEngineTestLayer[T Float](p *caffepb.LayerParameter) (Layer[T], error) {
	l := &engineTestLayer[T]{typ: p.GetType()}
	return l, l.Init(p)
}

func newEngineTestGPU[T Float](l *engineTestLayer[T]) Engine[T] { return hostEngine[T]{l} }

func init() {
	engineField := func(p *caffepb.LayerParameter) EngineName { return EngineName(p.GetConvolutionParam().GetEngine()) }
	MustRegisterType(Spec{Type: "EngineTest", New32: newEngineTestLayer[float32], New64: newEngineTestLayer[float64],
		EngineField: engineField, Engines: []EngineDef{GPUEngine(newEngineTestGPU[float32], newEngineTestGPU[float64])}})
	MustRegisterType(Spec{Type: "EngineTestHost", New32: newEngineTestLayer[float32], New64: newEngineTestLayer[float64],
		EngineField: engineField})
}
