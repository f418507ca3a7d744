//go:build mpi

package mpi_test

import (
	"bytes"
	"testing"

	"github.com/gocaffe/gocaffe/internal/mpitest"
	"github.com/gocaffe/gocaffe/mpi"
)

// Three ranks all-reduce, broadcast and meet at a barrier.
func TestCollectives(t *testing.T) {
	if mpitest.Run(t, 3, "TestCollectives") {
		return
	}
	rank, size, err := mpi.Init()
	if err != nil {
		t.Fatal(err)
	}
	defer mpi.Finalize()
	if size != 3 || rank < 0 || rank >= 3 {
		t.Fatalf("rank %d of %d, want one of 3", rank, size)
	}
	// Rank r holds r+1 and (r+1)*i: the sums are 6 and 6*i.
	f32 := []float32{float32(rank + 1), float32(2 * (rank + 1)), float32(3 * (rank + 1))}
	if err := mpi.AllReduceSum(f32); err != nil {
		t.Fatal(err)
	}
	if f32[0] != 6 || f32[1] != 12 || f32[2] != 18 {
		t.Errorf("rank %d: float32 sum %v, want [6 12 18]", rank, f32)
	}
	f64 := []float64{0.5 * float64(rank)}
	if err := mpi.AllReduceSum(f64); err != nil {
		t.Fatal(err)
	}
	if f64[0] != 1.5 {
		t.Errorf("rank %d: float64 sum %v, want 1.5", rank, f64[0])
	}
	msg := make([]byte, 5)
	if rank == 1 {
		copy(msg, "hello")
	}
	if err := mpi.Broadcast(msg, 1); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(msg, []byte("hello")) {
		t.Errorf("rank %d: broadcast gave %q", rank, msg)
	}
	if err := mpi.Barrier(); err != nil {
		t.Fatal(err)
	}
	// A second Init returns the same answer.
	if r2, s2, err := mpi.Init(); err != nil || r2 != rank || s2 != size {
		t.Errorf("second Init: %d %d %v", r2, s2, err)
	}
}
