package net_test

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/internal/logtest"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// planNet has an in-place ReLU, a blob read twice (a Split inserted) and
// a Flatten, whose top aliases its bottom.
const planNet = `name: "plan"
layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 } } }
layer { name: "conv" type: "Convolution" bottom: "x" top: "c" convolution_param { num_output: 2 kernel_size: 3 } }
layer { name: "relu" type: "ReLU" bottom: "c" top: "c" }
layer { name: "flat" type: "Flatten" bottom: "c" top: "f" }
layer { name: "a" type: "InnerProduct" bottom: "f" top: "a" inner_product_param { num_output: 3 } }
layer { name: "b" type: "InnerProduct" bottom: "f" top: "b" inner_product_param { num_output: 3 } }
`

// The plan of a host net: the build-time passes in order, a line per
// layer (Split included) with its engine, and the blobs, those sharing
// memory naming whose.
func TestPlanOfHostNet(t *testing.T) {
	n := build(t, planNet, caffepb.Phase_TRAIN)
	p := n.Plan()
	var names []string
	for _, pass := range p.Passes {
		names = append(names, pass.Name)
	}
	if want := []string{"engines", "precision", "fusion", "fold", "cuda-graph", "liveness", "memory"}; !slices.Equal(names, want) {
		t.Fatalf("passes %v, want %v", names, want)
	}
	if got := len(p.Layers); got != len(n.Layers()) {
		t.Fatalf("%d layers in the plan, the net has %d", got, len(n.Layers()))
	}
	for i, l := range p.Layers {
		if l.Engine != "host" || l.ComputedBy != "" || l.Graph == "" {
			t.Errorf("layer %d (%s): engine %q, computed by %q, graph %q; want host, none, and a reason for no graph", i, l.Name, l.Engine, l.ComputedBy, l.Graph)
		}
	}
	if !strings.Contains(p.Pass("cuda-graph").Summary, "runs on the host") {
		t.Errorf("cuda-graph pass: %q", p.Pass("cuda-graph").Summary)
	}
	shares := map[string]string{}
	for _, b := range p.Blobs {
		shares[b.Name] = b.SharesWith
	}
	if shares["f"] != "c" {
		t.Errorf("Flatten's top f shares %q, want c", shares["f"])
	}
	if shares["x"] != "" || shares["c"] != "" {
		t.Errorf("x and c share %q and %q, want their own memory", shares["x"], shares["c"])
	}
	split := 0
	for name, with := range shares {
		if strings.Contains(name, "split") && with == "c" {
			split++
		}
	}
	if split != 2 {
		t.Errorf("%d Split tops share c's memory (through f), want 2 (%v)", split, shares)
	}
	text := p.String()
	for _, want := range []string{`Plan of net "plan" (TRAIN)`, "engines:", "memory:", "relu", "ReLU", "shares c's"} {
		if !strings.Contains(text, want) {
			t.Errorf("the printed plan lacks %q:\n%s", want, text)
		}
	}
}

// debug_info leaves fusion out of the plan, whose pass says why; the
// plan is a copy the caller cannot change.
func TestPlanDebugInfoAndCopy(t *testing.T) {
	n := build(t, "debug_info: true\n"+planNet, caffepb.Phase_TRAIN)
	p := n.Plan()
	if !strings.Contains(p.Pass("fusion").Summary, "debug_info") {
		t.Errorf("fusion pass with debug_info: %q", p.Pass("fusion").Summary)
	}
	p.Layers[0].Name = "changed"
	if n.Plan().Layers[0].Name == "changed" {
		t.Error("changing the returned plan changed the net's")
	}
}

// BorrowActivations adds a "borrow" pass to the test net's plan, naming
// the train net's blobs its computed blobs use.
func TestPlanBorrow(t *testing.T) {
	train := build(t, planNet, caffepb.Phase_TRAIN)
	test := build(t, strings.Replace(planNet, `name: "plan"`, `name: "plantest"`, 1), caffepb.Phase_TEST)
	lenderPasses := len(train.Plan().Passes)
	for _, n := range []*net.Net[float64]{train, test} {
		if _, err := n.Forward(); err != nil {
			t.Fatal(err)
		}
	}
	lent, err := test.BorrowActivations(train)
	if err != nil {
		t.Fatal(err)
	}
	p := test.Plan()
	last := p.Passes[len(p.Passes)-1]
	if last.Name != "borrow" || lent == 0 {
		t.Fatalf("last pass %+v after lending %d bytes, want borrow", last, lent)
	}
	borrowed := 0
	for _, b := range p.Blobs {
		if strings.HasPrefix(b.SharesWith, `net "plan"'s `) {
			borrowed++
		}
	}
	if borrowed == 0 {
		t.Errorf("no blob of the test net borrows the train net's: %+v", p.Blobs)
	}
	if len(train.Plan().Passes) != lenderPasses {
		t.Errorf("the lending net's plan changed: %+v", train.Plan().Passes)
	}
}

// NVCaffe's precision fields: a layer's own forward_type wins over the
// net's default_forward_type, the plan shows what each layer asked and
// what it runs in, and the build warns once that FLOAT16 runs in FP32
// instead of dropping the fields without a word.
func TestPlanPrecisionOfNVCaffeFields(t *testing.T) {
	var rec logtest.Recorder
	text := `name: "fp16"
default_forward_type: FLOAT16 default_backward_type: FLOAT16
global_grad_scale: 64
layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" inner_product_param { num_output: 2 } }
layer { name: "prob" type: "Softmax" bottom: "y" top: "p" forward_type: FLOAT backward_type: FLOAT }`
	opts := net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum()}, Logger: rec.Logger()}
	n, err := net.New[float32](parseNet(t, text), opts)
	if err != nil {
		t.Fatal(err)
	}
	p := n.Plan()
	asked := map[string]string{}
	for _, l := range p.Layers {
		if l.Precision != "FP32" {
			t.Errorf("layer %s runs in %q, want FP32", l.Name, l.Precision)
		}
		asked[l.Name] = l.Asked
	}
	const fp16 = "FLOAT16/FLOAT16, math FLOAT/FLOAT" // NVCaffe's math types default to FLOAT
	if asked["in"] != fp16 || asked["ip"] != fp16 || asked["prob"] != "" {
		t.Errorf("asked %v: want FLOAT16/FLOAT16 for in and ip (the net's default), nothing for prob (its own FLOAT)", asked)
	}
	summary := p.Pass("precision").Summary
	for _, want := range []string{fp16 + " (2 layers)", "on the host every layer computes in FP32: 16-bit storage is built for GPU layers only", "global_grad_scale 64 (static loss scaling): applied by a solver"} {
		if !strings.Contains(summary, want) {
			t.Errorf("precision pass %q lacks %q", summary, want)
		}
	}
	if !strings.Contains(p.String(), "FP32 (asks "+fp16+")") {
		t.Errorf("the printed plan lacks the asked precision:\n%s", p.String())
	}
	line, ok := rec.Find(`Net "fp16": 2 layers asked for 16 bits compute in FP32 (in first)`)
	if !ok || line.Level != slog.LevelWarn {
		t.Errorf("no warning about FLOAT16 running in FP32 (found %v, %+v)", ok, line)
	}
}
