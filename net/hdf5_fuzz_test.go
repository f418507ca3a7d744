package net_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gocaffe/gocaffe/internal/badinput"
	"github.com/gocaffe/gocaffe/internal/h5pytest"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// hdf5WeightsNet has the layer "ip" of the HDF5 seeds' weights (2x3 and 2)
// and a convolution, so that loaded weights are then used.
const hdf5WeightsNet = `layer { name: "d" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" inner_product_param { num_output: 2 } }
layer { name: "r" type: "Reshape" bottom: "y" top: "r" reshape_param { shape { dim: 2 dim: 1 dim: 1 dim: 2 } } }
layer { name: "student" type: "Convolution" bottom: "r" top: "c" convolution_param { num_output: 2 kernel_w: 2 kernel_h: 1 } }`

// FuzzHDF5Weights loads whatever the fuzzer writes as -weights does
// (weights in HDF5 are recognised by content): an error or weights of the
// net's shapes, then a forward pass; never a panic or an allocation beyond
// the file's size.
func FuzzHDF5Weights(f *testing.F) {
	var p caffepb.NetParameter
	if err := protoio.ParseText([]byte(hdf5WeightsNet), &p); err != nil {
		f.Fatal(err)
	}
	build := func(t testing.TB) *net.Net[float32] {
		n, err := net.New[float32](&p, net.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := build(f)
	path := filepath.Join(f.TempDir(), "w.h5")
	if err := n.ToHDF5(path, false); err != nil {
		f.Fatal(err)
	}
	n.Close()
	written, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(written)
	for _, b := range h5pytest.Seeds(f) {
		f.Add(b)
	}
	f.Add(badinput.HDF5LinkNameBomb())
	f.Add(badinput.HDF5(badinput.H5Dataset{Path: "data/student/0", Shape: []uint64{2, 2, 1, 2}, Deflated: badinput.DeflateBomb(1 << 20)}))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := build(t)
		defer n.Close()
		path := filepath.Join(t.TempDir(), "w.h5")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := n.CopyTrainedLayersFromFile(path); err == nil {
			n.Forward()
		}
	})
}
