package all_test

import (
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/layer"
)

// caffeTypes are the layer types BVLC Caffe 1.0 registers.
var caffeTypes = []string{
	"AbsVal", "Accuracy", "ArgMax", "BatchNorm", "BatchReindex", "Bias", "BNLL", "Clip", "Concat", "ContrastiveLoss",
	"Convolution", "Crop", "Data", "Deconvolution", "Dropout", "DummyData", "Eltwise", "ELU", "Embed", "EuclideanLoss",
	"Exp", "Filter", "Flatten", "HDF5Data", "HDF5Output", "HingeLoss", "Im2col", "ImageData", "InfogainLoss",
	"InnerProduct", "Input", "Log", "LRN", "LSTM", "LSTMUnit", "MemoryData", "MultinomialLogisticLoss", "MVN",
	"Parameter", "Pooling", "Power", "PReLU", "Python", "Reduction", "ReLU", "Reshape", "RNN", "Scale", "Sigmoid",
	"SigmoidCrossEntropyLoss", "Silence", "Slice", "Softmax", "SoftmaxWithLoss", "Split", "SPP", "Swish", "TanH",
	"Threshold", "Tile", "WindowData",
}

// Every type Caffe 1.0 registers is registered here.
func TestTypesCoverCaffe(t *testing.T) {
	types := layer.Types()
	for _, typ := range caffeTypes {
		if !slices.Contains(types, typ) {
			t.Errorf("layer type %s is missing", typ)
		}
	}
}
