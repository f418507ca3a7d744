package solver

import (
	"fmt"
	"unsafe"

	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// checkSnapshotSize refuses, before any training, a run whose binaryproto
// snapshots could never be read back: protobuf reads at most 2 GiB - 1
// bytes, so a net with more in its weights (or its solver history) would
// train for hours and then write snapshots that neither Caffe nor gocaffe
// can load. Caffe fails only when it writes the first one; failing here
// loses no work. A run that snapshots only when asked (no snapshot
// interval, snapshot_after_train off) is warned instead: its requested
// snapshots will fail as they are written (protoio.WriteProtoToBinaryFile).
func (s *Solver[T]) checkSnapshotSize() error {
	if s.param.GetSnapshotFormat() != caffepb.SolverParameter_BINARYPROTO || !s.Root() {
		return nil
	}
	model, state := s.snapshotSizes()
	err := checkBinarySnapshot(s.snapshotFilename(".caffemodel"), s.snapshotFilename(".solverstate"), model, state)
	if err == nil {
		return nil
	}
	if s.param.GetSnapshot() == 0 && !s.param.GetSnapshotAfterTrain() {
		logf.Warnf(s.log, "%v", err)
		return nil
	}
	return err
}

// snapshotSizes returns lower bounds of the sizes of a binary snapshot:
// the packed numbers alone of the .caffemodel (every layer's blobs, as
// Net.ToProto writes them, with their diffs under snapshot_diff) and of
// the .solverstate (the update rule's history). Names and shapes add a few
// bytes more, which the writer checks exactly.
func (s *Solver[T]) snapshotSizes() (model, state int64) {
	elem := int64(unsafe.Sizeof(T(0)))
	copies := int64(1)
	if s.param.GetSnapshotDiff() {
		copies = 2
	}
	for _, l := range s.net.Layers() {
		for _, b := range l.LayerBase().Blobs() {
			model += copies * elem * int64(b.Count())
		}
	}
	for _, h := range s.history {
		state += elem * int64(h.Count())
	}
	return model, state
}

// binaryLimit is the largest binary snapshot file, protoio.BinaryLimit; a
// variable only so that tests can reach it with small nets.
var binaryLimit int64 = protoio.BinaryLimit

// checkBinarySnapshot says whether a binary snapshot whose files would take
// model and state bytes can be read back, and what to do when it cannot.
func checkBinarySnapshot(modelFile, stateFile string, model, state int64) error {
	for _, f := range []struct {
		path, what string
		size       int64
	}{{modelFile, "caffe.NetParameter", model}, {stateFile, "caffe.SolverState", state}} {
		if f.size > binaryLimit {
			return fmt.Errorf("snapshot_format BINARYPROTO cannot hold this net: %s would be %d bytes (%.2f GiB) as a binary %s, over the %d bytes that protobuf, Caffe's reader and gocaffe's, can read back (2 GiB - 1); set snapshot_format: HDF5 in the solver, which has no such limit",
				f.path, f.size, float64(f.size)/(1<<30), f.what, binaryLimit)
		}
	}
	return nil
}
