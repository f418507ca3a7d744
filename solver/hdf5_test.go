package solver_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gocaffe/gocaffe/internal/h5pytest"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
)

// A training set written by h5py trains through HDF5Data: three Gaussian
// clusters in 4 dimensions, in two files (the second gzip-compressed),
// learned by a softmax classifier to low loss.
func TestTrainFromHDF5Data(t *testing.T) {
	dir := t.TempDir()
	h5pytest.Run(t, dir, `
import h5py, numpy as np
rng = np.random.default_rng(3)
centres = np.array([[2, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 2]], np.float32)
for name, n, gz in [('a.h5', 60, None), ('b.h5', 48, 'gzip')]:
    label = rng.integers(0, 3, n)
    data = centres[label] + 0.3 * rng.standard_normal((n, 4)).astype(np.float32)
    with h5py.File(name, 'w') as f:
        f.create_dataset('data', data=data, compression=gz)
        f.create_dataset('label', data=label.astype(np.float32), compression=gz)
`)
	list := filepath.Join(dir, "train.txt")
	if err := os.WriteFile(list, []byte("a.h5\nb.h5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := `
net_param {
  name: "HDF5Softmax"
  layer { name: "data" type: "HDF5Data" top: "data" top: "label"
    hdf5_data_param { source: "` + list + `" batch_size: 12 shuffle: true } }
  layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
    inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
}
base_lr: 0.1 momentum: 0.9 lr_policy: "fixed" max_iter: 150 display: 0
random_seed: 1701 snapshot_after_train: false`
	p := &caffepb.SolverParameter{}
	if err := protoio.ParseText([]byte(text), p); err != nil {
		t.Fatal(err)
	}
	s, err := solver.New[float32](p, solver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first, err := s.Net().ForwardBackward()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Solve(""); err != nil {
		t.Fatal(err)
	}
	var loss float32
	for range 9 { // one pass over the 108 rows
		l, err := s.Net().Forward()
		if err != nil {
			t.Fatal(err)
		}
		loss += l / 9
	}
	if loss > 0.05 || loss > first/10 {
		t.Errorf("loss %v after training (first %v), want below 0.05", loss, first)
	}
}
