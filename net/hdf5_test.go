package net_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/internal/h5pytest"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Weights in Caffe's HDF5 layout: written by ToHDF5 they load back; written
// by h5py (as Caffe's Net::ToHDF5 would) they load, found by the file's
// signature whatever its name.
func TestHDF5Weights(t *testing.T) {
	dir := t.TempDir()
	src := build(t, euclideanNet("", false), caffepb.Phase_TRAIN)
	path := filepath.Join(dir, "w.caffemodel.h5")
	if err := src.ToHDF5(path, true); err != nil {
		t.Fatal(err)
	}
	dst, err := net.New[float64](parseNet(t, euclideanNet("", false)), net.Options{Seed: 99})
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.CopyTrainedLayersFromFile(path); err != nil {
		t.Fatal(err)
	}
	for i, p := range dst.LearnableParams() {
		if !slices.Equal(p.CPUData(), src.LearnableParams()[i].CPUData()) {
			t.Errorf("param %d not copied", i)
		}
	}

	h5pytest.Run(t, dir, `
import h5py, numpy as np
with h5py.File('caffe.weights', 'w') as f:
    f.create_group('data/data')
    f['data/ip/0'] = np.arange(6, dtype=np.float32).reshape(2, 3)
    f['data/ip/1'] = np.array([7, 8], np.float32)
    f.create_group('data/gone')
with h5py.File('wide.h5', 'w') as f:
    f['data/ip/0'] = np.zeros((3, 3), np.float32)
with h5py.File('extra.h5', 'w') as f:
    for i in range(3):
        f['data/ip/%d' % i] = np.zeros(2, np.float32)
with h5py.File('nobias.h5', 'w') as f:
    f['data/ip/0'] = np.zeros((2, 3), np.float32)
`)
	if err := dst.CopyTrainedLayersFromFile(filepath.Join(dir, "caffe.weights")); err != nil {
		t.Fatal(err)
	}
	ip := dst.LayerByName("ip").LayerBase().Blobs()
	if !slices.Equal(ip[0].CPUData(), []float64{0, 1, 2, 3, 4, 5}) || !slices.Equal(ip[1].CPUData(), []float64{7, 8}) {
		t.Errorf("ip weights %v %v", ip[0].CPUData(), ip[1].CPUData())
	}
	for file, want := range map[string]string{
		"wide.h5":   "dataset /data/ip/0: cannot load blob from hdf5; shape mismatch. Source shape is 3 3 (9) target shape is 2 3 (6)",
		"extra.h5":  `incompatible number of blobs for layer "ip": the file has 3`,
		"nobias.h5": "no dataset /data/ip/1",
	} {
		err := dst.CopyTrainedLayersFromFile(filepath.Join(dir, file))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), file) {
			t.Errorf("%s: err = %v, want %q", file, err, want)
		}
	}
	if !slices.Equal(ip[1].CPUData(), []float64{7, 8}) {
		t.Error("a refused file changed the weights")
	}
	// Caffe cannot write HDF5 weights of a net with two layers of one name.
	dup := build(t, dupNet, caffepb.Phase_TRAIN)
	if err := dup.ToHDF5(filepath.Join(dir, "dup.h5"), false); err == nil || !strings.Contains(err.Error(), `layer "ip"`) {
		t.Errorf("duplicate names: %v", err)
	}
}
