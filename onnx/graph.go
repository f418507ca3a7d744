package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/proto/onnxpb"
)

// builder accumulates an ONNX graph: nodes in the order they are added
// (Caffe's layer order is already topological), initializers, and the value
// names in use, since ONNX values are assigned exactly once.
type builder struct {
	graph *onnxpb.GraphProto
	used  map[string]bool
}

func newBuilder(name string) *builder {
	if name == "" { // ONNX requires a graph name; a prototxt need not have one
		name = "net"
	}
	return &builder{graph: &onnxpb.GraphProto{Name: proto.String(name)}, used: map[string]bool{}}
}

// reserve marks names as taken so that no intermediate value takes them.
func (b *builder) reserve(name string) { b.used[name] = true }

// unique returns base, or base_1, base_2, ... when base is taken, and takes
// it.
func (b *builder) unique(base string) string {
	name := base
	for i := 1; b.used[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	b.used[name] = true
	return name
}

// node appends one node; its name is made unique from the op's owner.
func (b *builder) node(op, owner string, in, out []string, attrs ...*onnxpb.AttributeProto) {
	b.graph.Node = append(b.graph.Node, &onnxpb.NodeProto{
		Name:      proto.String(b.unique(owner + "/" + op)),
		OpType:    proto.String(op),
		Input:     in,
		Output:    out,
		Attribute: attrs,
	})
}

// op appends a node with one output, a fresh value named after base, and
// returns that value.
func (b *builder) op(op, owner, base string, in []string, attrs ...*onnxpb.AttributeProto) string {
	out := b.unique(base)
	b.node(op, owner, in, []string{out}, attrs...)
	return out
}

// floats adds a float initializer of the given shape (nil or empty: a
// scalar) and returns its name.
func (b *builder) floats(base string, shape []int, data []float32) string {
	if n := count(shape); n != len(data) {
		panic(fmt.Sprintf("onnx: initializer %s: shape %v holds %d values, got %d", base, shape, n, len(data)))
	}
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	return b.initializer(base, onnxpb.TensorProto_FLOAT, shape, raw)
}

// scalar adds a float scalar initializer.
func (b *builder) scalar(base string, v float32) string { return b.floats(base, nil, []float32{v}) }

// int64s adds a 1-D int64 initializer (shapes, axes, pads) and returns its
// name.
func (b *builder) int64s(base string, data []int64) string {
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	return b.initializer(base, onnxpb.TensorProto_INT64, []int{len(data)}, raw)
}

func (b *builder) initializer(base string, t onnxpb.TensorProto_DataType, shape []int, raw []byte) string {
	name := b.unique(base)
	b.graph.Initializer = append(b.graph.Initializer, &onnxpb.TensorProto{
		Name:     proto.String(name),
		DataType: proto.Int32(int32(t)),
		Dims:     dims64(shape),
		RawData:  raw,
	})
	return name
}

// valueInfo describes a float tensor; a dimension given as a string in
// symbolic (by axis) is symbolic.
func valueInfo(name string, shape []int, symbolic map[int]string) *onnxpb.ValueInfoProto {
	s := &onnxpb.TensorShapeProto{}
	for i, d := range shape {
		dim := &onnxpb.TensorShapeProto_Dimension{}
		if p, ok := symbolic[i]; ok {
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: p}
		} else {
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}
		}
		s.Dim = append(s.Dim, dim)
	}
	return &onnxpb.ValueInfoProto{
		Name: proto.String(name),
		Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
			ElemType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)),
			Shape:    s,
		}}},
	}
}

func attrInt(name string, v int) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(int64(v))}
}

func attrInts(name string, v []int) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: ints64(v)}
}

func attrFloat(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

func attrString(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func count(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

func ints64(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

func dims64(shape []int) []int64 {
	if len(shape) == 0 {
		return nil
	}
	return ints64(shape)
}
