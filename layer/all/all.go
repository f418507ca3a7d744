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
	_ "github.com/gocaffe/gocaffe/layer/detection" // SSD's and Faster R-CNN's detection layers
	_ "github.com/gocaffe/gocaffe/layer/loss"      // the loss layers, and Accuracy
	_ "github.com/gocaffe/gocaffe/layer/recurrent" // RNN, LSTM, LSTMUnit
)
