package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/solver"
)

// -loss_scale's words and numbers, and the mistakes it refuses.
func TestLossScaleFlag(t *testing.T) {
	for in, want := range map[string]solver.LossScale{
		"net":             {},
		"off":             {Mode: solver.LossScaleOff},
		"static:1024":     {Mode: solver.LossScaleStatic, Scale: 1024},
		"adaptive:0.5":    {Mode: solver.LossScaleAdaptive, Scale: 0.5},
		"dynamic":         {Mode: solver.LossScaleDynamic},
		"dynamic:256":     {Mode: solver.LossScaleDynamic, Scale: 256},
		"dynamic:1e4:100": {Mode: solver.LossScaleDynamic, Scale: 1e4, GrowthInterval: 100},
	} {
		var got solver.LossScale
		if err := (lossScaleFlag{&got}).Set(in); err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
		if in != "net" && (lossScaleFlag{&got}).String() != strings.Replace(in, "1e4", "10000", 1) {
			t.Errorf("%q prints as %q", in, (lossScaleFlag{&got}).String())
		}
	}
	for _, in := range []string{"", "static", "static:", "static:0", "static:-2", "static:inf", "static:1:2", "adaptive", "dynamic:x", "dynamic:8:0", "dynamic:8:1.5", "dynamic:8:10:3", "off:2", "fp16"} {
		var got solver.LossScale
		if err := (lossScaleFlag{&got}).Set(in); err == nil {
			t.Errorf("%q accepted: %+v", in, got)
		}
	}
}

// `gocaffe train -loss_scale static:1024` logs its scaling and, a power of
// two in FP32, writes the very weights of a run without it; dynamic
// scaling says its scale on the display lines.
func TestTrainLossScale(t *testing.T) {
	dir := t.TempDir()
	model := func(prefix string, flags ...string) ([]byte, string) {
		path := writeSolver(t, dir, prefix, "max_iter: 30")
		code, log := gocaffe(t, append([]string{"train", "-solver", path}, flags...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d:\n%s", flags, code, log)
		}
		b, err := os.ReadFile(filepath.Join(dir, prefix+"_iter_30.caffemodel"))
		if err != nil {
			t.Fatal(err)
		}
		return b, log
	}
	plain, _ := model("plain")
	static, log := model("static", "-loss_scale", "static:1024")
	if !strings.Contains(log, "Loss scaling: static, scale 1024") {
		t.Errorf("no loss scaling line in the log:\n%s", log)
	}
	if !proto.Equal(readModel(t, filepath.Join(dir, "plain_iter_30.caffemodel")), readModel(t, filepath.Join(dir, "static_iter_30.caffemodel"))) || !slices.Equal(plain, static) {
		t.Error("-loss_scale static:1024 changed the weights")
	}
	_, log = model("dynamic", "-loss_scale", "dynamic:256:10")
	for _, want := range []string{"Loss scaling: dynamic, scale 256", "Iteration 20, lr = 0.05, loss scale = 1024", "Iteration 9: 10 iterations without overflow; loss scale now 512"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if code, log := gocaffe(t, "train", "-solver", writeSolver(t, dir, "bad", "max_iter: 1"), "-loss_scale", "static"); code == 0 || !strings.Contains(log, "loss_scale") {
		t.Errorf("-loss_scale static: exit %d:\n%s", code, log)
	}
}
