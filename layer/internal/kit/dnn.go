package kit

import (
	"slices"
	"unsafe"

	"github.com/gocaffe/gocaffe/cuda"
)

// DNNType is cuDNN's type of T.
func DNNType[T Float]() cuda.DNNType {
	var zero T
	return cuda.DNNTypeOf(int(unsafe.Sizeof(zero)))
}

// TensorDesc keeps a tensor descriptor of some dims, remade only when they
// change.
type TensorDesc[T Float] struct {
	Desc *cuda.TensorDesc
	Dims []int
}

// Set gives the descriptor dims.
func (t *TensorDesc[T]) Set(dims ...int) error {
	if t.Desc != nil && slices.Equal(t.Dims, dims) {
		return nil
	}
	t.Dims = append(t.Dims[:0], dims...)
	if t.Desc == nil {
		d, err := cuda.NewTensorDesc(DNNType[T](), dims)
		t.Desc = d
		return err
	}
	return t.Desc.Set(dims)
}
