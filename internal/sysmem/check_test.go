package sysmem

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	if _, _, ok := Available(); !ok {
		t.Skip("the system says nothing of its memory here")
	}
	if err := Check(1<<20, "small"); err != nil {
		t.Errorf("1 MiB refused: %v", err)
	}
	err := Check(1<<62, "dataset /x")
	var e *Error
	if !errors.As(err, &e) || e.Need != 1<<62 || !strings.Contains(err.Error(), "dataset /x needs 4.0 EiB, but only ") {
		t.Errorf("4 EiB: %v", err)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 3 << 20: "3.0 MiB", 8 << 30: "8.0 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
