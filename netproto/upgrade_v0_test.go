package netproto_test

import (
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Caffe's NetUpgradeTest.TestAllParams: every V0 field of every V0 layer
// type goes to its V1 place.
func TestUpgradeV0AllParams(t *testing.T) {
	in := parseNet(t, `name: "CaffeNet" input: "input_data" input_dim: 64 input_dim: 3 input_dim: 32 input_dim: 32
layers { layer { name: "data" type: "data" source: "train-leveldb" meanfile: "mean.binaryproto"
  batchsize: 256 cropsize: 227 mirror: true scale: 0.25 rand_skip: 73 } top: "data" top: "label" }
layers { layer { name: "images" type: "images" source: "train-images" meanfile: "mean.binaryproto"
  batchsize: 256 cropsize: 227 mirror: true scale: 0.25 rand_skip: 73 shuffle_images: true new_height: 40 new_width: 30 }
  top: "images_data" top: "images_label" }
layers { layer { name: "window_data" type: "window_data" source: "train-leveldb" meanfile: "mean.binaryproto"
  batchsize: 256 cropsize: 227 mirror: true det_fg_threshold: 0.25 det_bg_threshold: 0.75 det_fg_fraction: 0.5
  det_context_pad: 16 det_crop_mode: "square" } top: "window_data" top: "window_label" }
layers { layer { name: "hdf5data" type: "hdf5_data" source: "/my/hdf5/data" batchsize: 256 } top: "hdf5data" }
layers { layer { name: "conv1" type: "conv" num_output: 96 biasterm: false pad: 4 kernelsize: 11 stride: 4
  weight_filler { type: "gaussian" std: 0.01 } bias_filler { type: "constant" value: 3 }
  blobs_lr: 1 blobs_lr: 2 weight_decay: 1 weight_decay: 0 } bottom: "data" top: "conv1" }
layers { layer { name: "pool1ave" type: "pool" pool: AVE kernelsize: 3 stride: 2 } bottom: "conv1" top: "pool1ave" }
layers { layer { name: "pool1stoch" type: "pool" pool: STOCHASTIC kernelsize: 4 stride: 5 } bottom: "conv1" top: "pool1stoch" }
layers { layer { name: "concat" type: "concat" concat_dim: 2 } bottom: "pool1ave" bottom: "pool1stoch" top: "pool1concat" }
layers { layer { name: "norm1" type: "lrn" local_size: 5 alpha: 0.0001 beta: 0.75 } bottom: "pool1concat" top: "norm1" }
layers { layer { name: "fc6" type: "innerproduct" num_output: 4096 biasterm: false
  weight_filler { type: "gaussian" std: 0.005 } bias_filler { type: "constant" value: 1 }
  blobs_lr: 1 blobs_lr: 2 weight_decay: 1 weight_decay: 0 } bottom: "norm1" top: "fc6" }
layers { layer { name: "relu6" type: "relu" } bottom: "fc6" top: "fc6" }
layers { layer { name: "drop6" type: "dropout" dropout_ratio: 0.2 } bottom: "fc6" top: "fc6" }
layers { layer { name: "loss" type: "infogain_loss" source: "/my/infogain/matrix" } bottom: "fc6" bottom: "label" }
layers { layer { name: "accuracy" type: "accuracy" } }
layers { layer { name: "bnll" type: "bnll" } }
layers { layer { name: "euclidean_loss" type: "euclidean_loss" } }
layers { layer { name: "flatten" type: "flatten" } }
layers { layer { name: "hdf5_output" type: "hdf5_output" hdf5_output_param { file_name: "/my/hdf5/output/file" } } }
layers { layer { name: "im2col" type: "im2col" } }
layers { layer { name: "images" type: "images" } }
layers { layer { name: "multinomial_logistic_loss" type: "multinomial_logistic_loss" } }
layers { layer { name: "sigmoid" type: "sigmoid" } }
layers { layer { name: "softmax" type: "softmax" } }
layers { layer { name: "split" type: "split" } }
layers { layer { name: "tanh" type: "tanh" } }`)
	want := parseNet(t, `name: "CaffeNet" input: "input_data" input_dim: 64 input_dim: 3 input_dim: 32 input_dim: 32
layers { name: "data" type: DATA data_param { source: "train-leveldb" batch_size: 256 rand_skip: 73 }
  transform_param { crop_size: 227 mirror: true scale: 0.25 mean_file: "mean.binaryproto" } top: "data" top: "label" }
layers { name: "images" type: IMAGE_DATA
  image_data_param { source: "train-images" batch_size: 256 rand_skip: 73 shuffle: true new_height: 40 new_width: 30 }
  transform_param { mean_file: "mean.binaryproto" crop_size: 227 mirror: true scale: 0.25 } top: "images_data" top: "images_label" }
layers { name: "window_data" type: WINDOW_DATA
  window_data_param { source: "train-leveldb" batch_size: 256 fg_threshold: 0.25 bg_threshold: 0.75 fg_fraction: 0.5 context_pad: 16 crop_mode: "square" }
  transform_param { mirror: true crop_size: 227 mean_file: "mean.binaryproto" } top: "window_data" top: "window_label" }
layers { name: "hdf5data" type: HDF5_DATA hdf5_data_param { source: "/my/hdf5/data" batch_size: 256 } top: "hdf5data" }
layers { name: "conv1" type: CONVOLUTION
  convolution_param { num_output: 96 bias_term: false pad: 4 kernel_size: 11 stride: 4
    weight_filler { type: "gaussian" std: 0.01 } bias_filler { type: "constant" value: 3 } }
  blobs_lr: 1 blobs_lr: 2 weight_decay: 1 weight_decay: 0 bottom: "data" top: "conv1" }
layers { name: "pool1ave" type: POOLING pooling_param { pool: AVE kernel_size: 3 stride: 2 } bottom: "conv1" top: "pool1ave" }
layers { name: "pool1stoch" type: POOLING pooling_param { pool: STOCHASTIC kernel_size: 4 stride: 5 } bottom: "conv1" top: "pool1stoch" }
layers { name: "concat" type: CONCAT concat_param { concat_dim: 2 } bottom: "pool1ave" bottom: "pool1stoch" top: "pool1concat" }
layers { name: "norm1" type: LRN lrn_param { local_size: 5 alpha: 0.0001 beta: 0.75 } bottom: "pool1concat" top: "norm1" }
layers { name: "fc6" type: INNER_PRODUCT
  inner_product_param { num_output: 4096 bias_term: false
    weight_filler { type: "gaussian" std: 0.005 } bias_filler { type: "constant" value: 1 } }
  blobs_lr: 1 blobs_lr: 2 weight_decay: 1 weight_decay: 0 bottom: "norm1" top: "fc6" }
layers { name: "relu6" type: RELU bottom: "fc6" top: "fc6" }
layers { name: "drop6" type: DROPOUT dropout_param { dropout_ratio: 0.2 } bottom: "fc6" top: "fc6" }
layers { name: "loss" type: INFOGAIN_LOSS infogain_loss_param { source: "/my/infogain/matrix" } bottom: "fc6" bottom: "label" }
layers { name: "accuracy" type: ACCURACY }
layers { name: "bnll" type: BNLL }
layers { name: "euclidean_loss" type: EUCLIDEAN_LOSS }
layers { name: "flatten" type: FLATTEN }
layers { name: "hdf5_output" type: HDF5_OUTPUT hdf5_output_param { file_name: "/my/hdf5/output/file" } }
layers { name: "im2col" type: IM2COL }
layers { name: "images" type: IMAGE_DATA }
layers { name: "multinomial_logistic_loss" type: MULTINOMIAL_LOGISTIC_LOSS }
layers { name: "sigmoid" type: SIGMOID }
layers { name: "softmax" type: SOFTMAX }
layers { name: "split" type: SPLIT }
layers { name: "tanh" type: TANH }`)
	if err := netproto.UpgradeV0Net(in); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(in, want) {
		t.Errorf("upgraded:\n%s\nwant:\n%s", prototext.Format(in), prototext.Format(want))
	}
}

// Fields of the wrong layer type are each reported, in Caffe's order, and
// the rest is converted.
func TestUpgradeV0Problems(t *testing.T) {
	p := parseNet(t, `layers { layer { name: "r" type: "relu" group: 2 kernelsize: 3 num_output: 4 shuffle_images: true scale: 2 } }`)
	err := netproto.UpgradeV0Net(p)
	want := `layer "r": unknown parameter num_output for layer type "relu"; ` +
		`layer "r": unknown parameter kernelsize for layer type "relu"; ` +
		`layer "r": unknown parameter group for layer type "relu"; ` +
		`layer "r": unknown parameter shuffle for layer type "relu"`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if got := p.Layers[0]; got.GetType() != caffepb.V1LayerParameter_RELU || got.GetTransformParam().GetScale() != 2 {
		t.Errorf("converted %v, want a RELU with scale 2", got)
	}
}
