package sysmem

import (
	"runtime"
	"testing"
)

// HugePages changes no value, and leaves small slices alone.
func TestHugePages(t *testing.T) {
	s := make([]float32, 3*HugeFrom/4+123)
	for i := range s {
		s[i] = float32(i)
	}
	got := HugePages(s)
	t.Logf("collapsed: %v (%s)", got, runtime.GOOS)
	for i, v := range s {
		if v != float32(i) {
			t.Fatalf("s[%d] = %v after HugePages, want %d", i, v, i)
		}
	}
	if HugePages(make([]byte, HugeFrom-1)) {
		t.Error("a slice shorter than HugeFrom collapsed")
	}
	if HugePages([]float64(nil)) {
		t.Error("nil collapsed")
	}
}
