package main

import (
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/syncedmem"
)

// -precision's words, what they ask of the nets, and the mistakes it
// refuses.
func TestPrecisionFlag(t *testing.T) {
	for in, want := range map[string]struct {
		s   syncedmem.Storage
		own bool
	}{
		"":     {syncedmem.StorageNative, false},
		"fp32": {syncedmem.StorageNative, true},
		"tf32": {syncedmem.StorageNative, true},
		"fp16": {syncedmem.StorageFloat16, true},
		"BF16": {syncedmem.StorageBFloat16, true},
	} {
		f := netFlags{precision: in}
		s, own, err := f.precisionOptions()
		if err != nil || s != want.s || own != want.own {
			t.Errorf("-precision %q: %v, %v, %v; want %v, %v", in, s, own, err, want.s, want.own)
		}
	}
	for _, f := range []netFlags{{precision: "half"}, {precision: "fp8"}, {precision: "fp32", tf32: true}} {
		if _, _, err := f.precisionOptions(); err == nil {
			t.Errorf("-precision %q (-tf32 %v) accepted", f.precision, f.tf32)
		}
	}
	code, log := gocaffe(t, "time", "-model", "../../models/lenet/lenet_train_test.prototxt", "-precision", "fp64")
	if code == 0 || !strings.Contains(log, "-precision fp64: want fp32, tf32, fp16 or bf16") {
		t.Errorf("-precision fp64: exit %d\n%s", code, log)
	}
}
