package onnx

import (
	"fmt"
	"slices"

	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/proto/onnxpb"
)

// converter writes one layer as ONNX nodes: it reads c.in and makes c.out.
type converter func(c *layerCtx) error

// converters holds the conversion of each exported layer type. Data
// layers and the training-only types are handled by the walk.
var converters = map[string]converter{}

func register(c converter, types ...string) {
	for _, t := range types {
		converters[t] = c
	}
}

// Types returns the Caffe layer types ExportNet converts, sorted.
func Types() []string {
	var out []string
	for t := range converters {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// layerCtx is one layer being converted.
type layerCtx struct {
	b         *builder
	name, typ string
	lp        *caffepb.LayerParameter
	layer     any // the layer itself, for the geometry it resolved
	in, out   []string
	inShapes  [][]int
	outShapes [][]int
	params    []paramBlob
	dynamic   bool
	batch     int
	opset     int
	// forward runs the layer on the net's blobs and returns its tops'
	// data, for layers whose output depends only on shapes (PriorBox).
	forward func() ([][]float32, error)
}

// paramBlob is a learned blob of the layer, in float32.
type paramBlob struct {
	shape []int
	data  []float32
}

func (c *layerCtx) unsupported(format string, args ...any) error {
	return &UnsupportedError{Layer: c.name, Type: c.typ, Why: fmt.Sprintf(format, args...)}
}

// node writes a node with the given inputs into the layer's top j.
func (c *layerCtx) node(op string, j int, in []string, attrs ...*onnxpb.AttributeProto) {
	c.b.node(op, c.name, in, []string{c.out[j]}, attrs...)
}

// tmp writes a node with a fresh output named after the layer and returns
// the output.
func (c *layerCtx) tmp(op string, in []string, attrs ...*onnxpb.AttributeProto) string {
	return c.b.op(op, c.name, c.name+"/"+lowerOp(op), in, attrs...)
}

// param adds learned blob i as an initializer named after the layer,
// reshaped to shape (nil: its own shape).
func (c *layerCtx) param(i int, suffix string, shape []int) (string, error) {
	if i >= len(c.params) {
		return "", fmt.Errorf("layer %q (%s) has %d learned blobs, blob %d is missing", c.name, c.typ, len(c.params), i)
	}
	p := c.params[i]
	if shape == nil {
		shape = p.shape
	}
	return c.b.floats(c.name+"/"+suffix, shape, p.data), nil
}

// constant adds a float initializer named after the layer.
func (c *layerCtx) constant(suffix string, shape []int, data []float32) string {
	return c.b.floats(c.name+"/"+suffix, shape, data)
}

// scalar adds a float scalar initializer named after the layer.
func (c *layerCtx) scalar(suffix string, v float32) string { return c.b.scalar(c.name+"/"+suffix, v) }

// axis makes a Caffe axis (negative counts from the end) an index of a
// shape of rank dims.
func (c *layerCtx) axis(a int32, dims int) (int, error) {
	i := int(a)
	if i < 0 {
		i += dims
	}
	if i < 0 || i >= dims {
		return 0, fmt.Errorf("layer %q (%s): axis %d is out of range for a %d-D blob", c.name, c.typ, a, dims)
	}
	return i, nil
}

// shapeConst adds the target of a Reshape into shape. With a dynamic
// batch the first axis is written 0 (ONNX: copy the input's), which is
// right only when the reshape keeps the batch axis as it is; otherwise the
// layer cannot be exported with a dynamic batch.
func (c *layerCtx) shapeConst(shape []int, keepsBatch bool) (string, error) {
	s := ints64(shape)
	if c.dynamic && len(s) > 0 && c.batch > 0 {
		if !keepsBatch {
			return "", c.unsupported("it reshapes across the batch axis, which a model with a dynamic batch cannot write down (export with a fixed batch)")
		}
		s[0] = 0
	}
	return c.b.int64s(c.name+"/shape", s), nil
}

// reshape writes value x reshaped to shape and returns the new value.
func (c *layerCtx) reshape(x string, shape []int, keepsBatch bool) (string, error) {
	s, err := c.shapeConst(shape, keepsBatch)
	if err != nil {
		return "", err
	}
	return c.tmp("Reshape", []string{x, s}), nil
}

// identity copies each bottom to its top (Dropout: Caffe scales what it
// keeps while training, so at test time it passes its input through).
func identity(c *layerCtx) error {
	for j := range c.out {
		c.node("Identity", j, []string{c.in[j]})
	}
	return nil
}

func lowerOp(op string) string {
	if op == "" {
		return op
	}
	b := []byte(op)
	if b[0] >= 'A' && b[0] <= 'Z' {
		b[0] += 'a' - 'A'
	}
	return string(b)
}

func ones(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

func filled(n int, v float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}
