package syncedmem

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/cuda"
)

// Without the cuda tag every device operation must fail with ErrNoCUDA and
// leave the memory as it was.
func TestDeviceCallsWithoutCUDA(t *testing.T) {
	if cuda.Available() {
		t.Skip("built with CUDA")
	}
	m := New(16)
	if _, err := m.GPUData(); !errors.Is(err, cuda.ErrNoCUDA) {
		t.Errorf("GPUData: err = %v, want ErrNoCUDA", err)
	} else if !strings.Contains(err.Error(), "built without CUDA support") {
		t.Errorf("GPUData error does not say why: %v", err)
	}
	if _, err := m.MutableGPUData(); !errors.Is(err, cuda.ErrNoCUDA) {
		t.Errorf("MutableGPUData: err = %v, want ErrNoCUDA", err)
	}
	if err := m.SetGPUData(0); !errors.Is(err, cuda.ErrNoCUDA) {
		t.Errorf("SetGPUData: err = %v, want ErrNoCUDA", err)
	}
	if m.Head() != Uninitialized {
		t.Errorf("failed device calls changed the head to %v", m.Head())
	}
	if err := m.AsyncGPUPush(nil); err == nil || !strings.Contains(err.Error(), "HEAD_AT_CPU") {
		t.Errorf("AsyncGPUPush from UNINITIALIZED: err = %v, want one naming the head", err)
	}
	m.MutableCPUData()[3] = 9
	if err := m.AsyncGPUPush(nil); !errors.Is(err, cuda.ErrNoCUDA) {
		t.Errorf("AsyncGPUPush: err = %v, want ErrNoCUDA", err)
	}
	if _, err := m.GPUData(); !errors.Is(err, cuda.ErrNoCUDA) {
		t.Errorf("GPUData at HEAD_AT_CPU: err = %v, want ErrNoCUDA", err)
	}
	if m.Head() != HeadAtCPU || m.CPUData()[3] != 9 {
		t.Errorf("failed device calls disturbed host data: head %v, byte %d", m.Head(), m.CPUData()[3])
	}
}
