package models_test

import (
	"path/filepath"
	"testing"

	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/solver"
)

// BenchmarkLeNetIteration times one training iteration (forward, backward,
// update) of LeNet at batch 64 on the CPU, fed by DummyData, and counts
// its allocations: the training loop should make none.
func BenchmarkLeNetIteration(b *testing.B) { benchLeNet(b, solver.Options{}, func() {}) }

// benchLeNet times LeNet training iterations with the given solver options;
// sync waits for the device after each.
func benchLeNet(b *testing.B, opts solver.Options, sync func()) {
	t := &testing.T{}
	p := readNet(t, filepath.Join("lenet", "lenet_train_test.prototxt"))
	withDummyData(t, p, []int{1, 28, 28}, 64)
	sp := &caffepb.SolverParameter{NetParam: p, BaseLr: ptr[float32](0.01), Momentum: ptr[float32](0.9),
		WeightDecay: ptr[float32](0.0005), LrPolicy: ptr("inv"), Gamma: ptr[float32](0.0001), Power: ptr[float32](0.75),
		Display: ptr[int32](0), SnapshotAfterTrain: ptr(false), RandomSeed: ptr[int64](1)}
	s, err := solver.New[float32](sp, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Step(2); err != nil { // warm up: buffers reach their sizes
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Step(1); err != nil {
			b.Fatal(err)
		}
		sync()
	}
}
