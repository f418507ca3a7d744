// Package all registers every layer type gocaffe has: import it for its
// side effect, as database/sql drivers are imported, wherever nets are
// built from prototxt,
//
//	import _ "github.com/gocaffe/gocaffe/layer/all"
//
// Package net does, so that a program building nets needs no import of
// its own; a program that wants fewer types imports only the family
// packages it needs.
package all

import (
	_ "github.com/gocaffe/gocaffe/layer/datalayer"     // the data layers (Data, ImageData, HDF5Data, Input, ...) and their prefetching
	_ "github.com/gocaffe/gocaffe/layer/detection"     // SSD's and Faster R-CNN's detection layers
	_ "github.com/gocaffe/gocaffe/layer/loss"          // the loss layers, and Accuracy
	_ "github.com/gocaffe/gocaffe/layer/neuron"        // the element-wise layers: ReLU, Sigmoid, TanH, Dropout, ...
	_ "github.com/gocaffe/gocaffe/layer/normalization" // BatchNorm, Scale, Bias, LRN, MVN, the forks' BN and Normalize
	_ "github.com/gocaffe/gocaffe/layer/recurrent"     // RNN, LSTM, LSTMUnit
	_ "github.com/gocaffe/gocaffe/layer/utility"       // Caffe's utility and common layers: InnerProduct, Concat, Eltwise, Softmax, Split, ...
	_ "github.com/gocaffe/gocaffe/layer/vision"        // Convolution, Deconvolution, Pooling, SPP, Crop, Im2col, the forks' Upsample and Interp
)
