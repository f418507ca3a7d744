//go:build !mpi

package mpi_test

import (
	"errors"
	"testing"

	"github.com/gocaffe/gocaffe/mpi"
)

func TestWithoutMPI(t *testing.T) {
	if mpi.Available() {
		t.Fatal("Available in a build without the mpi tag")
	}
	if _, _, err := mpi.Init(); !errors.Is(err, mpi.ErrNoMPI) {
		t.Errorf("Init: %v, want ErrNoMPI", err)
	}
	if err := mpi.AllReduceSum([]float32{1}); !errors.Is(err, mpi.ErrNoMPI) {
		t.Errorf("AllReduceSum: %v, want ErrNoMPI", err)
	}
}
