package cuda_test

import (
	"errors"
	"testing"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/internal/cudatest"
)

// cuDNN is found at run time; its absence is an error wrapping ErrNoCuDNN.
func TestCuDNNLoads(t *testing.T) {
	d := cudatest.Device(t)
	dnn, err := d.DNN()
	if errors.Is(err, cuda.ErrNoCuDNN) {
		t.Skipf("no cuDNN on this machine: %v", err)
	}
	if err != nil || dnn == nil {
		t.Fatalf("DNN: %v", err)
	}
	v, err := cuda.CuDNNVersion()
	if err != nil || v < 8000 {
		t.Fatalf("cuDNN version %d, %v; want 8 or later", v, err)
	}
	t.Logf("cuDNN %d.%d.%d", v/10000, v/100%100, v%100)
	again, _ := d.DNN()
	if again != dnn {
		t.Error("a second DNN call made another handle")
	}
}
