package device_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/settings"
)

// A context carries its own settings, the host's included; a nil context
// has the defaults; two contexts do not share theirs; a host view takes
// its context's GEMM choice.
func TestContextSettings(t *testing.T) {
	var none *device.Context
	if none.Settings() != (settings.Settings{}) {
		t.Errorf("a nil context's settings: %+v", none.Settings())
	}
	if g := device.Host[float32](none).GEMM(); g != settings.GEMMAuto {
		t.Errorf("a nil context's host view multiplies with %v", g)
	}
	a, b := device.New(nil), device.New(nil)
	if a.Settings() != (settings.Settings{}) {
		t.Errorf("a new context's settings: %+v", a.Settings())
	}
	want := settings.Settings{GEMM: settings.GEMMOwn, BatchNorm: settings.BatchNormRows, CuDNN: settings.Off}
	a.SetSettings(want)
	if a.Settings() != want || b.Settings() != (settings.Settings{}) {
		t.Errorf("after setting one context's: %+v and %+v", a.Settings(), b.Settings())
	}
	if g := device.Host[float64](a).GEMM(); g != settings.GEMMOwn {
		t.Errorf("the host view of a context with GEMM own multiplies with %v", g)
	}
	if g := (device.HostView[float32]{}).GEMM(); g != settings.GEMMAuto {
		t.Errorf("the zero host view multiplies with %v", g)
	}
}
