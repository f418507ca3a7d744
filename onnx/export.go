// Package onnx exports Caffe nets to ONNX: a deploy or train_val prototxt
// with its caffemodel becomes an ONNX model that computes the same outputs
// in any ONNX runtime.
//
// Every layer is written as ONNX operators that compute exactly what Caffe
// computes, including where ONNX's own operators differ from Caffe's: max
// and average pooling with Caffe's ceil rounding and its rule that the last
// window starts inside the image (explicit end padding instead of ceil_mode),
// average pooling's divisor that counts Caffe's padding (a Pad node before
// the pool), BatchNorm's stored moving-average factor (folded into the mean
// and variance), LRN within a channel (composed from pooling), Scale and Bias
// broadcasting from any axis. A layer with no faithful ONNX form is an
// UnsupportedError naming it; nothing is approximated.
//
// The net is built in its TEST phase (Options.State to choose another
// state). Data layers become the model's inputs, with the shapes they
// produce; layers only training needs (losses, Accuracy) are left out and
// listed in Model.Dropped, and what they read becomes the model's outputs.
//
//	m, err := onnx.ExportFiles("deploy.prototxt", "net.caffemodel", onnx.Options{})
//	if err != nil { ... }
//	err = m.WriteFile("net.onnx")
//
// Opsets 13 to 21 are written; the operators chosen mean the same in all of
// them, and the model's IR version is the lowest that its opset allows.
package onnx

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/proto/onnxpb"
	"github.com/gocaffe/gocaffe/protoio"
)

// The opsets Export writes.
const (
	DefaultOpset = 13
	MinOpset     = 13
	MaxOpset     = 21
)

// BatchDim is the name of the symbolic batch dimension of a model exported
// with Options.DynamicBatch.
const BatchDim = "N"

// Options says what to export and how.
type Options struct {
	// Opset is the ONNX operator set version, MinOpset to MaxOpset; 0 means
	// DefaultOpset.
	Opset int
	// Batch, if positive, replaces the batch size of every input (Export
	// only; ExportNet exports the shapes the net has).
	Batch int
	// DynamicBatch makes the first axis of the inputs and outputs the
	// symbolic BatchDim. Layers that would need the batch size written
	// into the model (a Reshape across the batch axis) are then errors.
	DynamicBatch bool
	// State selects the layers (Export only); nil means phase TEST.
	State *caffepb.NetState
	// Logger receives the net's messages while it is built; nil is
	// slog.Default().
	Logger *slog.Logger
	// SkipUnknownFields skips, with a warning each, the prototxt's fields
	// gocaffe's schema does not have (ExportFiles).
	SkipUnknownFields bool
}

// Model is an exported model.
type Model struct {
	Proto *onnxpb.ModelProto
	// Inputs and Outputs name the graph's inputs and outputs (Caffe blob
	// names).
	Inputs, Outputs []string
	// Dropped lists the layers left out of the model and why.
	Dropped []Dropped
}

// Dropped is a layer left out of an exported model.
type Dropped struct {
	Layer, Type, Why string
}

func (d Dropped) String() string { return fmt.Sprintf("%s (%s): %s", d.Layer, d.Type, d.Why) }

// Marshal returns the model in ONNX's binary format.
func (m *Model) Marshal() ([]byte, error) { return proto.Marshal(m.Proto) }

// WriteFile writes the model to path.
func (m *Model) WriteFile(path string) error {
	data, err := m.Marshal()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o666)
}

// UnsupportedError is a layer that cannot be exported faithfully.
type UnsupportedError struct {
	Layer, Type, Why string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("layer %q (%s) cannot be exported to ONNX: %s", e.Layer, e.Type, e.Why)
}

// ExportFiles reads a net prototxt and, if weightsPath is not empty, its
// trained weights (a binary .caffemodel or Caffe's HDF5), and exports them.
func ExportFiles(modelPath, weightsPath string, opts Options) (*Model, error) {
	model, err := netproto.ReadNetParamsFromTextFileWith(modelPath, protoio.TextOptions{SkipUnknownFields: opts.SkipUnknownFields}, opts.Logger)
	if err != nil {
		return nil, err
	}
	m, err := export(model, nil, weightsPath, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", modelPath, err)
	}
	return m, nil
}

// Export exports the net model describes with the weights of the trained
// net weights (nil: the fillers' values).
func Export(model, weights *caffepb.NetParameter, opts Options) (*Model, error) {
	return export(model, weights, "", opts)
}

// export exports model with the weights of weights or, if weightsPath is
// not empty, of that file.
func export(model, weights *caffepb.NetParameter, weightsPath string, opts Options) (*Model, error) {
	if err := checkOpset(opts.Opset); err != nil {
		return nil, err
	}
	state := opts.State
	if state == nil {
		state = &caffepb.NetState{Phase: caffepb.Phase_TEST.Enum()}
	}
	// The export reads every blob it writes out: they keep their values.
	netOpts := net.Options{State: state, Logger: opts.Logger, Seed: 1, NoMemoryReuse: true}
	// The first build learns what the data layers produce (a Data layer
	// reads its first record); the net exported is then built with Input
	// layers in their place, at the batch size asked for.
	first, err := net.New[float32](model, netOpts)
	if err != nil {
		return nil, err
	}
	withInputs, err := replaceDataLayers(model, first, opts.Batch, opts.Logger)
	first.Close()
	if err != nil {
		return nil, err
	}
	n, err := net.New[float32](withInputs, netOpts)
	if err != nil {
		return nil, err
	}
	defer n.Close()
	switch {
	case weightsPath != "":
		err = n.CopyTrainedLayersFromFile(weightsPath)
	case weights != nil:
		err = n.CopyTrainedLayersFrom(weights)
	}
	if err != nil {
		return nil, err
	}
	return ExportNet(n, opts)
}

// replaceDataLayers returns model (upgraded) with each data layer that
// built net n holds replaced by an Input layer of the shapes it produced,
// with batch > 0 as their batch size: the first axis of the tops whose
// first axis is the first data top's (an input of another kind, a vector
// of means say, keeps its shape).
func replaceDataLayers(model *caffepb.NetParameter, n *net.Net[float32], batch int, log *slog.Logger) (*caffepb.NetParameter, error) {
	p := proto.Clone(model).(*caffepb.NetParameter)
	if err := netproto.Upgrade(p, "net "+p.GetName(), log); err != nil {
		return nil, err
	}
	netBatch := -1
	for i, lp := range p.Layer {
		if !isDataLayer(lp.GetType(), len(lp.Bottom)) {
			continue
		}
		in := &caffepb.LayerParameter{
			Name: lp.Name, Type: proto.String("Input"), Top: lp.Top,
			Include: lp.Include, Exclude: lp.Exclude, InputParam: &caffepb.InputParameter{},
		}
		for _, top := range lp.Top {
			b := n.BlobByName(top)
			if b == nil { // a layer the state leaves out
				in = nil
				break
			}
			shape := &caffepb.BlobShape{Dim: ints64(b.Shape())}
			if len(shape.Dim) > 0 && netBatch < 0 {
				netBatch = int(shape.Dim[0])
			}
			if batch > 0 && len(shape.Dim) > 0 && int(shape.Dim[0]) == netBatch {
				shape.Dim[0] = int64(batch)
			}
			in.InputParam.Shape = append(in.InputParam.Shape, shape)
		}
		if in != nil {
			p.Layer[i] = in
		}
	}
	return p, nil
}

// isDataLayer says whether a layer feeds the net from outside: one with no
// bottoms that the exporter does not convert (Parameter is converted), as
// its type's spec says (layer.ONNXInput) or, for a layer of a type without
// an ONNX form, because it reads nothing from the net.
func isDataLayer(typ string, bottoms int) bool {
	return bottoms == 0 && onnxForm(typ) != layer.ONNXConverted
}

// trainingOnly says why a layer type is left out of an exported model
// (its spec's form is layer.ONNXDropped), or "" if it is exported.
func trainingOnly(typ string) string {
	if s, ok := layer.SpecOf(typ); ok && s.ONNX == layer.ONNXDropped {
		return s.ONNXWhy
	}
	return ""
}

// onnxForm is the ONNX form of a layer type, from its spec.
func onnxForm(typ string) layer.ONNXForm {
	s, _ := layer.SpecOf(typ)
	return s.ONNX
}

func checkOpset(v int) error {
	if v != 0 && (v < MinOpset || v > MaxOpset) {
		return fmt.Errorf("opset %d is not one gocaffe writes (%d to %d)", v, MinOpset, MaxOpset)
	}
	return nil
}

// irVersion is the lowest IR version an opset may be written with.
func irVersion(opset int) int64 {
	switch {
	case opset <= 14:
		return 7
	case opset <= 18:
		return 8
	case opset <= 20:
		return 9
	}
	return 10
}

// ExportNet exports a built net with its current weights and shapes.
func ExportNet[T net.Float](n *net.Net[T], opts Options) (*Model, error) {
	if err := checkOpset(opts.Opset); err != nil {
		return nil, err
	}
	opset := opts.Opset
	if opset == 0 {
		opset = DefaultOpset
	}
	w := newWalk(n, opts.DynamicBatch, opset)
	if err := w.run(); err != nil {
		return nil, err
	}
	if len(w.b.graph.Output) == 0 {
		return nil, errors.New("the exported net has no outputs")
	}
	m := &onnxpb.ModelProto{
		IrVersion:       proto.Int64(irVersion(opset)),
		OpsetImport:     []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(int64(opset))}},
		ProducerName:    proto.String("gocaffe"),
		ProducerVersion: proto.String("1"),
		DocString:       proto.String("exported from the Caffe net " + n.Name()),
		Graph:           w.b.graph,
	}
	return &Model{Proto: m, Inputs: w.inputs, Outputs: w.outputs, Dropped: w.dropped}, nil
}

// walk turns a net's layers, in order, into the graph.
type walk[T net.Float] struct {
	n       *net.Net[T]
	b       *builder
	dynamic bool
	opset   int
	batch   int // the first input's batch size

	blobName  map[*blob.Blob[T]]string
	last      map[*blob.Blob[T]]int    // the last exported or data layer writing each blob
	cur       map[*blob.Blob[T]]string // each blob's current ONNX value
	gone      map[*blob.Blob[T]]string // blobs last written by a dropped layer: which
	fromData  map[string][]int         // data layers' values: their shapes
	dataOrder []string                 // data layers' values in the order made
	inputBlob map[*blob.Blob[T]]bool   // blobs whose first value is a graph input
	made      map[string][]int         // values exported layers made: their shapes
	used      map[string]bool          // values some exported layer reads

	inputs, outputs []string
	dropped         []Dropped
}

func newWalk[T net.Float](n *net.Net[T], dynamic bool, opset int) *walk[T] {
	w := &walk[T]{
		n: n, b: newBuilder(n.Name()), dynamic: dynamic, opset: opset,
		blobName: map[*blob.Blob[T]]string{}, last: map[*blob.Blob[T]]int{},
		cur: map[*blob.Blob[T]]string{}, gone: map[*blob.Blob[T]]string{},
		fromData: map[string][]int{}, made: map[string][]int{}, used: map[string]bool{},
		inputBlob: map[*blob.Blob[T]]bool{},
	}
	names := n.BlobNames()
	for i, b := range n.Blobs() {
		w.blobName[b] = names[i]
		w.b.reserve(names[i])
	}
	for i, l := range n.Layers() {
		if trainingOnly(l.Type()) != "" {
			continue
		}
		for _, t := range n.Tops(i) {
			w.last[t] = i
		}
	}
	return w
}

func (w *walk[T]) run() error {
	names := w.n.LayerNames()
	var order []string // values in the order they were made, for the outputs
	for i, l := range w.n.Layers() {
		typ, name := l.Type(), names[i]
		bottoms, tops := w.n.Bottoms(i), w.n.Tops(i)
		if why := trainingOnly(typ); why != "" {
			w.dropped = append(w.dropped, Dropped{name, typ, why})
			for _, t := range tops {
				w.gone[t] = name
				delete(w.cur, t)
			}
			continue
		}
		if onnxForm(typ) == layer.ONNXAlias {
			if len(bottoms) > 1 && len(bottoms) == len(tops) { // TSN's Gather: top j is bottom j
				for j, b := range bottoms {
					w.alias(b, tops[j:j+1])
				}
				continue
			}
			w.alias(bottoms[0], tops)
			continue
		}
		if isDataLayer(typ, len(bottoms)) {
			for _, t := range tops {
				v := w.inputValue(t)
				w.fromData[v] = t.Shape()
				w.dataOrder = append(w.dataOrder, v)
				if w.batch == 0 && len(t.Shape()) > 0 {
					w.batch = t.Shape()[0]
				}
			}
			continue
		}
		c, err := w.context(i, name, l, bottoms, tops)
		if err != nil {
			return err
		}
		convert := converters[typ]
		if convert == nil {
			return c.unsupported("gocaffe has no ONNX form for this layer type")
		}
		if err := convert(c); err != nil {
			return err
		}
		for j, t := range tops {
			w.cur[t] = c.out[j]
			w.made[c.out[j]] = c.outShapes[j]
			order = append(order, c.out[j])
		}
	}
	w.finish(order)
	return nil
}

// alias makes a Split layer's tops other names of its bottom's value:
// the net inserts Split wherever a blob feeds several layers, and a copy in
// the model would make a blob read only by left-out layers look used.
func (w *walk[T]) alias(bottom *blob.Blob[T], tops []*blob.Blob[T]) {
	for _, t := range tops {
		if v, ok := w.cur[bottom]; ok {
			w.cur[t] = v
		} else if by, gone := w.gone[bottom]; gone {
			w.gone[t] = by
		}
	}
}

// inputValue names the value a data layer writes into blob t, a graph
// input: always the blob's own name, which the model's user feeds. A layer
// that later writes the blob in place makes a value of a new name (see
// topValue).
func (w *walk[T]) inputValue(t *blob.Blob[T]) string {
	v := w.blobName[t]
	w.inputBlob[t] = true
	w.cur[t] = v
	delete(w.gone, t)
	return v
}

// topValue names the value a layer writes into blob t: the blob's own
// name if no later layer writes it (in place) and it is no graph input's,
// a new name otherwise.
func (w *walk[T]) topValue(t *blob.Blob[T], layerIndex int, layerName string) string {
	v := w.blobName[t]
	if w.last[t] != layerIndex || w.inputBlob[t] {
		v = w.b.unique(v + "/" + layerName)
	}
	w.cur[t] = v
	delete(w.gone, t)
	return v
}

// context prepares a layer's conversion: its input values (which must
// exist), its output names, shapes and learned blobs.
func (w *walk[T]) context(i int, name string, lay layer.Layer[T], bottoms, tops []*blob.Blob[T]) (*layerCtx, error) {
	c := &layerCtx{
		b: w.b, name: name, typ: lay.Type(), lp: lay.LayerBase().Param(), layer: lay,
		dynamic: w.dynamic, batch: w.batch, opset: w.opset,
	}
	for _, bt := range bottoms {
		v, ok := w.cur[bt]
		if !ok {
			if by, dropped := w.gone[bt]; dropped {
				return nil, fmt.Errorf("layer %q (%s) reads blob %q, which comes from layer %q, left out of the export", name, c.typ, w.blobName[bt], by)
			}
			return nil, fmt.Errorf("layer %q (%s) reads blob %q, which no exported layer writes", name, c.typ, w.blobName[bt])
		}
		w.used[v] = true
		c.in = append(c.in, v)
		c.inShapes = append(c.inShapes, bt.Shape())
	}
	for _, t := range tops {
		c.out = append(c.out, w.topValue(t, i, name))
		c.outShapes = append(c.outShapes, t.Shape())
	}
	for _, p := range lay.LayerBase().Blobs() {
		c.params = append(c.params, paramBlob{shape: p.Shape(), data: toFloat32(p.CPUData())})
	}
	c.forward = func() ([][]float32, error) {
		if _, err := layer.Forward(lay, bottoms, tops); err != nil {
			return nil, err
		}
		var out [][]float32
		for _, t := range tops {
			out = append(out, toFloat32(t.CPUData()))
		}
		return out, nil
	}
	return c, nil
}

// finish declares the inputs (data values some layer reads) and the
// outputs (final values of exported layers that no exported layer reads).
func (w *walk[T]) finish(order []string) {
	// The data values, not the blobs' final ones: a layer in place on an
	// input blob leaves it another value at the end.
	for _, v := range w.dataOrder {
		if w.used[v] {
			shape := w.fromData[v]
			w.b.graph.Input = append(w.b.graph.Input, valueInfo(v, shape, w.symbolic(shape)))
			w.inputs = append(w.inputs, v)
		}
	}
	final := map[string]bool{}
	for _, v := range w.cur {
		final[v] = true
	}
	for _, v := range order {
		if final[v] && !w.used[v] {
			w.b.graph.Output = append(w.b.graph.Output, valueInfo(v, w.made[v], w.symbolic(w.made[v])))
			w.outputs = append(w.outputs, v)
			delete(final, v)
		}
	}
}

// symbolic marks the batch axis of a shape when the batch is dynamic.
func (w *walk[T]) symbolic(shape []int) map[int]string {
	if !w.dynamic || len(shape) == 0 || shape[0] != w.batch {
		return nil
	}
	return map[int]string{0: BatchDim}
}

func toFloat32[T net.Float](x []T) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}
