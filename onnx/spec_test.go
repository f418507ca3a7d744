package onnx

import (
	"testing"

	"github.com/gocaffe/gocaffe/layer"
)

// Every registered layer type's spec says how it exports, and the
// exporter agrees: a converter exactly for the types whose spec says
// ONNXConverted, and a reason for every type left out or not exportable.
func TestConvertersMatchSpecs(t *testing.T) {
	specs := layer.Specs()
	if len(specs) == 0 {
		t.Fatal("no layer types registered")
	}
	for _, s := range specs {
		_, converted := converters[s.Type]
		switch {
		case s.ONNX == layer.ONNXConverted && !converted:
			t.Errorf("%s: its spec says ONNXConverted, and the exporter has no converter for it", s.Type)
		case s.ONNX != layer.ONNXConverted && converted:
			t.Errorf("%s: the exporter converts it, and its spec says %v", s.Type, s.ONNX)
		case (s.ONNX == layer.ONNXNone || s.ONNX == layer.ONNXDropped) && s.ONNXWhy == "":
			t.Errorf("%s: its spec says %v without a reason (ONNXWhy)", s.Type, s.ONNX)
		}
	}
	for typ := range converters {
		if _, ok := layer.SpecOf(typ); !ok {
			t.Errorf("the exporter converts %q, which is no registered layer type", typ)
		}
	}
}
