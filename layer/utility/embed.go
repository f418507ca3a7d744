package utility

import (
	"errors"
	"fmt"

	"github.com/gocaffe/gocaffe/layer"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func init() {
	layer.MustRegisterType(layer.Spec{
		Type:  "Embed",
		New32: newEmbed[float32], New64: newEmbed[float64],
		Engines: []layer.EngineDef{layer.GPUEngine(newEmbedGPU[float32], newEmbedGPU[float64])},
		ONNX:    layer.ONNXConverted,
	})
}

// Embed looks up rows of a learnable table (Caffe's EmbedLayer): each
// bottom value is an integer index in [0, input_dim) and gives the row of
// num_output values of the weight (input_dim x num_output), plus the bias
// (num_output) with bias_term. The top's shape is the bottom's followed by
// num_output. The indices get no gradient.
type embedLayer[T layer.Float] struct {
	layer.Base[T]
	k, n     int // input_dim, num_output
	biasTerm bool
	shape    []int
	ones     *blob.Blob[T] // for the bias on the device (embed_cuda.go)
}

func newEmbed[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &embedLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	ep := p.GetEmbedParam()
	l.k, l.n, l.biasTerm = int(ep.GetInputDim()), int(ep.GetNumOutput()), ep.GetBiasTerm()
	if l.k <= 0 {
		return nil, errors.New("embed_param.input_dim must be positive")
	}
	if l.n <= 0 {
		return nil, errors.New("embed_param.num_output must be positive")
	}
	return l, nil
}

// Type returns "Embed".
func (*embedLayer[T]) Type() string { return "Embed" }

// Counts returns one bottom and one top.
func (*embedLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(1), Top: layer.Exactly(1)}
}

// AllowForceBackward refuses the indices.
func (*embedLayer[T]) AllowForceBackward(int) bool { return false }

// LayerSetUp creates and fills the weight and bias (unless a model gave
// them).
func (l *embedLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	if len(l.Blobs()) > 0 {
		if l.biasTerm {
			return l.CheckParamShapes([]string{"weight", "bias"}, []int{l.k, l.n}, []int{l.n})
		}
		return l.CheckParamShapes([]string{"weight"}, []int{l.k, l.n})
	}
	ep := l.Param().GetEmbedParam()
	w, err := l.NewParamBlob(ep.GetWeightFiller(), l.k, l.n)
	if err != nil {
		return fmt.Errorf("weight filler: %w", err)
	}
	l.AddBlob(w)
	if l.biasTerm {
		b, err := l.NewParamBlob(ep.GetBiasFiller(), l.n)
		if err != nil {
			return fmt.Errorf("bias filler: %w", err)
		}
		l.AddBlob(b)
	}
	return nil
}

// Reshape sizes the top: the bottom's shape and num_output.
func (l *embedLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	l.shape = append(append(l.shape[:0], bottom[0].Shape()...), l.n)
	return top[0].Reshape(l.shape)
}

// index checks and converts bottom value i.
func (l *embedLayer[T]) index(v T, i int) (int, error) {
	idx := int(v)
	if T(idx) != v || idx < 0 || idx >= l.k {
		return 0, fmt.Errorf("bottom value %v at %d is not an index in [0, input_dim=%d)", v, i, l.k)
	}
	return idx, nil
}

// ForwardCPU copies the indexed rows (and adds the bias).
func (l *embedLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	w, y := l.Blobs()[0].CPUData(), top[0].MutableCPUData()
	var b []T
	if l.biasTerm {
		b = l.Blobs()[1].CPUData()
	}
	for i, v := range bottom[0].CPUData() {
		idx, err := l.index(v, i)
		if err != nil {
			return err
		}
		row := y[i*l.n : (i+1)*l.n]
		copy(row, w[idx*l.n:(idx+1)*l.n])
		for j := range b {
			row[j] += b[j]
		}
	}
	return nil
}

// BackwardCPU accumulates each top row's gradient into its weight row (and
// the bias).
func (l *embedLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	if propagateDown[0] {
		return errors.New("can't propagate to EmbedLayer input")
	}
	dy := top[0].CPUDiff()
	if l.ParamPropagateDown(0) {
		dw := l.Blobs()[0].MutableCPUDiff()
		for i, v := range bottom[0].CPUData() {
			idx, err := l.index(v, i)
			if err != nil {
				return err
			}
			row := dw[idx*l.n : (idx+1)*l.n]
			for j, g := range dy[i*l.n : (i+1)*l.n] {
				row[j] += g
			}
		}
	}
	if l.biasTerm && l.ParamPropagateDown(1) {
		db := l.Blobs()[1].MutableCPUDiff()
		for i := range bottom[0].Count() {
			for j, g := range dy[i*l.n : (i+1)*l.n] {
				db[j] += g
			}
		}
	}
	return nil
}
