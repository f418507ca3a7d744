package net_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/fuzzguard"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// fuzzNets seed the net fuzz target: the layer families (vision, neuron,
// loss, recurrent, shape), in place where Caffe allows it, and Caffe's old
// V1 format.
var fuzzNets = []string{
	`layer { name: "d" type: "DummyData" top: "x" top: "y" dummy_data_param { shape { dim: 2 dim: 3 dim: 6 dim: 6 } shape { dim: 2 } data_filler { type: "gaussian" } data_filler { type: "constant" value: 1 } } }
layer { name: "c" type: "Convolution" bottom: "x" top: "c" convolution_param { num_output: 4 kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
layer { name: "r" type: "ReLU" bottom: "c" top: "c" }
layer { name: "p" type: "Pooling" bottom: "c" top: "p" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "n" type: "LRN" bottom: "p" top: "n" lrn_param { local_size: 3 } }
layer { name: "ip" type: "InnerProduct" bottom: "n" top: "ip" inner_product_param { num_output: 3 } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "y" top: "loss" }
layer { name: "acc" type: "Accuracy" bottom: "ip" bottom: "y" top: "acc" include { phase: TEST } }`,
	`layer { name: "d" type: "DummyData" top: "a" top: "b" dummy_data_param { shape { dim: 2 dim: 4 } data_filler { type: "uniform" } } }
layer { name: "s" type: "Slice" bottom: "a" top: "s1" top: "s2" slice_param { axis: 1 slice_point: 1 } }
layer { name: "cat" type: "Concat" bottom: "s1" bottom: "s2" top: "cat" }
layer { name: "e" type: "Eltwise" bottom: "cat" bottom: "b" top: "e" eltwise_param { operation: PROD } }
layer { name: "bn" type: "BatchNorm" bottom: "e" top: "e" }
layer { name: "sc" type: "Scale" bottom: "e" top: "e" scale_param { bias_term: true } }
layer { name: "loss" type: "EuclideanLoss" bottom: "e" bottom: "b" top: "loss" }`,
	`layer { name: "d" type: "DummyData" top: "x" top: "cont" top: "t" dummy_data_param { shape { dim: 3 dim: 2 dim: 2 } shape { dim: 3 dim: 2 } shape { dim: 3 dim: 2 dim: 4 } data_filler { type: "gaussian" } data_filler { type: "constant" value: 1 } data_filler { type: "gaussian" } } }
layer { name: "lstm" type: "LSTM" bottom: "x" bottom: "cont" top: "h" recurrent_param { num_output: 4 weight_filler { type: "uniform" min: -0.1 max: 0.1 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "h" bottom: "t" top: "loss" }`,
	`layer { name: "d" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "sig" type: "Sigmoid" bottom: "x" top: "x" }
layer { name: "pw" type: "Power" bottom: "x" top: "x" power_param { power: 2 scale: 0.5 } }
layer { name: "rs" type: "Reshape" bottom: "x" top: "r" reshape_param { shape { dim: 0 dim: -1 dim: 1 } } }
layer { name: "fl" type: "Flatten" bottom: "r" top: "f" }
layer { name: "red" type: "Reduction" bottom: "f" top: "loss" loss_weight: 1 }`,
	// SSD's layers (eight, fuzzguard's limit on lists).
	`layer { name: "d" type: "DummyData" top: "x" top: "gt" dummy_data_param { shape { dim: 2 dim: 3 dim: 8 dim: 8 } shape { dim: 1 dim: 1 dim: 2 dim: 8 } data_filler { type: "gaussian" } data_filler { type: "constant" value: 1 } } }
layer { name: "n" type: "Normalize" bottom: "x" top: "n" norm_param { across_spatial: false channel_shared: false } }
layer { name: "loc" type: "Convolution" bottom: "n" top: "loc" convolution_param { num_output: 8 kernel_size: 1 weight_filler { type: "xavier" } } }
layer { name: "locp" type: "Permute" bottom: "loc" top: "locp" permute_param { order: 0 order: 2 order: 3 order: 1 } }
layer { name: "conf" type: "Convolution" bottom: "n" top: "conf" convolution_param { num_output: 6 kernel_size: 1 weight_filler { type: "xavier" } } }
layer { name: "pb" type: "PriorBox" bottom: "n" bottom: "x" top: "pb" prior_box_param { min_size: 2 aspect_ratio: 2 flip: false } }
layer { name: "loss" type: "MultiBoxLoss" bottom: "locp" bottom: "conf" bottom: "pb" bottom: "gt" top: "loss" include { phase: TRAIN }
  propagate_down: true propagate_down: true propagate_down: false propagate_down: false multibox_loss_param { num_classes: 3 } }
layer { name: "det" type: "DetectionOutput" bottom: "locp" bottom: "conf" bottom: "pb" top: "det" include { phase: TEST }
  detection_output_param { num_classes: 3 nms_param { nms_threshold: 0.45 } keep_top_k: 5 } }`,
	// The other forks' layers.
	`layer { name: "d" type: "DummyData" top: "x" top: "a" top: "rois" dummy_data_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 } shape { dim: 2 dim: 3 } shape { dim: 2 dim: 5 } data_filler { type: "gaussian" } data_filler { type: "uniform" } data_filler { type: "constant" value: 1 } } }
layer { name: "bn" type: "BN" bottom: "x" top: "bn" bn_param { slope_filler { type: "constant" value: 1 } } }
layer { name: "ax" type: "Axpy" bottom: "a" bottom: "bn" bottom: "x" top: "ax" }
layer { name: "it" type: "Interp" bottom: "ax" top: "it" interp_param { zoom_factor: 2 } }
layer { name: "p" type: "Pooling" bottom: "it" top: "p" top: "mask" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "up" type: "Upsample" bottom: "p" bottom: "mask" top: "up" upsample_param { scale: 2 } }
layer { name: "roi" type: "ROIPooling" bottom: "up" bottom: "rois" top: "roi" roi_pooling_param { pooled_h: 2 pooled_w: 2 spatial_scale: 1 } }
layer { name: "red" type: "Reduction" bottom: "roi" top: "loss" loss_weight: 1 }`,
	`name: "v1" layers { name: "d" type: DUMMY_DATA top: "x" dummy_data_param { num: 2 channels: 1 height: 4 width: 4 } }
layers { name: "c" type: CONVOLUTION bottom: "x" top: "c" convolution_param { num_output: 2 kernel_size: 3 } }
layers { name: "t" type: TANH bottom: "c" top: "c" }`,
}

// writesFiles: layers the fuzz target must not build, since they write
// where the fuzzed text says.
func writesFiles(text string) bool {
	lower := strings.ToLower(text)
	return strings.Contains(lower, "hdf5output") || strings.Contains(lower, "hdf5_output")
}

// FuzzNetPrototxt builds whatever net text parses, in both phases, and runs
// it forward and backward: any error is fine, a panic or a hang is not.
func FuzzNetPrototxt(f *testing.F) {
	for _, s := range fuzzNets {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var p caffepb.NetParameter
		if protoio.ParseText([]byte(text), &p) != nil || !fuzzguard.Affordable(&p) || writesFiles(text) {
			return
		}
		for _, phase := range []caffepb.Phase{caffepb.Phase_TRAIN, caffepb.Phase_TEST} {
			n, err := net.New[float32](&p, net.Options{State: &caffepb.NetState{Phase: phase.Enum()}, Seed: 1})
			if err != nil {
				continue
			}
			n.ForwardBackward()
			n.Close()
		}
	})
}

// FuzzCaffemodel copies whatever bytes parse as a NetParameter into a net
// (as -weights does): errors are fine, a panic or a huge allocation is not.
func FuzzCaffemodel(f *testing.F) {
	var p caffepb.NetParameter
	if err := protoio.ParseText([]byte(fuzzNets[0]), &p); err != nil {
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
	model, err := proto.Marshal(n.ToProto(false))
	if err != nil {
		f.Fatal(err)
	}
	n.Close()
	f.Add(model)
	f.Add(model[:len(model)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		n := build(t)
		defer n.Close()
		path := filepath.Join(t.TempDir(), "w.caffemodel")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := n.CopyTrainedLayersFromFile(path); err == nil {
			n.ForwardBackward()
		}
	})
}

// TestFuzzNetSeedsBuild: the seeds are nets that build and run, so the
// fuzzer starts from deep inside the code, not from parse errors.
func TestFuzzNetSeedsBuild(t *testing.T) {
	for i, s := range fuzzNets {
		var p caffepb.NetParameter
		if err := protoio.ParseText([]byte(s), &p); err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		if !fuzzguard.Affordable(&p) {
			t.Errorf("seed %d is not affordable, the fuzz target would skip it", i)
		}
		n, err := net.New[float32](&p, net.Options{Seed: 1})
		if err != nil {
			t.Errorf("seed %d: %v", i, err)
			continue
		}
		if _, err := n.ForwardBackward(); err != nil {
			t.Errorf("seed %d: %v", i, err)
		}
		n.Close()
	}
}
