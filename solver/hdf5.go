package solver

import (
	"fmt"
	"strconv"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/hdf5"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/protoio"
)

// snapshotHDF5 writes snapshot_format HDF5 snapshots, in Caffe's layout:
// <prefix>_iter_N.caffemodel.h5 (Net.ToHDF5) and
// <prefix>_iter_N.solverstate.h5 holding the int datasets "iter" and
// "current_step", the string "learned_net" and the group "history" of
// datasets "0", "1", ... (SGDSolver::SnapshotSolverStateToHDF5).
func (s *Solver[T]) snapshotHDF5() (model, state string, err error) {
	model = s.snapshotFilename(".caffemodel.h5")
	logf.Infof(s.log, "Snapshotting to HDF5 file %s", model)
	if err := s.net.ToHDF5(model, s.param.GetSnapshotDiff()); err != nil {
		return "", "", err
	}
	b := hdf5.NewBuilder()
	root := b.Root()
	if err := root.CreateInt32s("iter", []int{1}, []int32{int32(s.iter)}); err != nil {
		return "", "", err
	}
	if err := root.CreateString("learned_net", model); err != nil {
		return "", "", err
	}
	if err := root.CreateInt32s("current_step", []int{1}, []int32{int32(s.currentStep)}); err != nil {
		return "", "", err
	}
	hist, err := root.CreateGroup("history")
	if err != nil {
		return "", "", err
	}
	for i, h := range s.history {
		if err := h.ToHDF5(hist, strconv.Itoa(i), false); err != nil {
			return "", "", err
		}
	}
	state = s.snapshotFilename(".solverstate.h5")
	logf.Infof(s.log, "Snapshotting solver state to HDF5 file %s", state)
	if err := protoio.WriteFileAtomic(state, b.Bytes()); err != nil {
		return "", "", err
	}
	s.snapshotIter, s.snapshotState = s.iter, state
	return model, state, nil
}

// restoreHDF5 resumes from a .solverstate.h5 (SGDSolver::
// RestoreSolverStateFromHDF5). The history is read and checked before
// anything changes.
func (s *Solver[T]) restoreHDF5(path string) error {
	f, err := hdf5.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	iter, err := readInt(f, "iter")
	if err != nil {
		return err
	}
	step, err := readInt(f, "current_step")
	if err != nil {
		return err
	}
	hist, err := f.OpenGroup("history")
	if err != nil {
		return fmt.Errorf("error reading history from %s: %w", path, err)
	}
	if n := len(hist.Names()); n != len(s.history) {
		return fmt.Errorf("%s: incorrect length of history blobs: %d, the %s solver of this net needs %d", path, n, s.typ, len(s.history))
	}
	staged := make([]*blob.Blob[T], len(s.history))
	for i, h := range s.history {
		d, err := hist.Dataset(strconv.Itoa(i))
		if err != nil {
			return err
		}
		if staged[i], err = blob.New[T](h.Shape()...); err != nil {
			return err
		}
		if err := staged[i].FromHDF5(d, false); err != nil {
			return fmt.Errorf("history blob %d: %w", i, err)
		}
	}
	root, err := f.Root()
	if err != nil {
		return err
	}
	if root.Has("learned_net") {
		d, err := f.OpenDataset("learned_net")
		if err != nil {
			return err
		}
		model, err := d.ReadString()
		if err != nil {
			return err
		}
		if err := s.loadLearnedNet(path, model); err != nil {
			return err
		}
	}
	if err := s.checkState(path, iter, step); err != nil {
		return err
	}
	for i, h := range s.history {
		copy(h.MutableCPUData(), staged[i].CPUData())
	}
	s.iter, s.currentStep = iter, step
	return nil
}

// readInt reads a one-element integer dataset (Caffe's hdf5_load_int).
func readInt(f *hdf5.File, name string) (int, error) {
	d, err := f.OpenDataset(name)
	if err != nil {
		return 0, err
	}
	if d.Count() != 1 || d.Class() != hdf5.Integer {
		return 0, fmt.Errorf("%s: dataset %s: want one integer, got %d elements of %v", f.Path(), d.Path(), d.Count(), d.Class())
	}
	v := make([]float64, 1)
	if err := hdf5.ReadFloats(d, v); err != nil {
		return 0, err
	}
	return int(v[0]), nil
}
