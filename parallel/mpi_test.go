//go:build mpi

package parallel_test

import (
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/internal/mpitest"
	"github.com/gocaffe/gocaffe/parallel"
)

// Two CPU ranks over MPI: rank 0's weights reach rank 1, gradients become
// their mean, and requests their union.
func TestMPIGradients(t *testing.T) {
	if mpitest.Run(t, 2, "TestMPIGradients") {
		return
	}
	comm, err := parallel.NewMPI()
	if err != nil {
		t.Fatal(err)
	}
	defer comm.Close()
	r := comm.Rank()
	w, _ := blob.New[float64](2, 3)
	b, _ := blob.New[float64](3)
	for i := range w.MutableCPUData() {
		w.MutableCPUData()[i] = float64(10*r + i)
		w.MutableCPUDiff()[i] = float64(r + 1) // mean 1.5
	}
	for i := range b.MutableCPUDiff() {
		b.MutableCPUDiff()[i] = float64(i * (r + 1)) // mean 1.5 i
	}
	params := []*blob.Blob[float64]{w, b}
	if err := parallel.BroadcastData(comm, params); err != nil {
		t.Fatal(err)
	}
	for i, v := range w.CPUData() {
		if v != float64(i) {
			t.Errorf("rank %d: weight %d = %v after broadcast, want rank 0's %d", r, i, v, i)
		}
	}
	g := parallel.NewGradients(comm, params)
	if err := g.Reduce(); err != nil {
		t.Fatal(err)
	}
	for i, v := range w.CPUDiff() {
		if v != 1.5 {
			t.Errorf("rank %d: weight diff %d = %v, want the mean 1.5", r, i, v)
		}
	}
	for i, v := range b.CPUDiff() {
		if v != 1.5*float64(i) {
			t.Errorf("rank %d: bias diff %d = %v, want %v", r, i, v, 1.5*float64(i))
		}
	}
	if n := testing.AllocsPerRun(10, func() { g.Reduce() }); n != 0 {
		t.Errorf("Reduce allocates %v times per call", n)
	}
	a := parallel.NewAgree(comm, 2)
	got, err := a.Union(uint(1 << r)) // rank 0 asks for bit 0, rank 1 for bit 1
	if err != nil || got != 3 {
		t.Errorf("rank %d: union %b, %v; want 11", r, got, err)
	}
	if got, err := a.Union(0); err != nil || got != 0 {
		t.Errorf("rank %d: union of nothing %b, %v", r, got, err)
	}
}
