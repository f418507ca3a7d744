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

// Set gives the descriptor dims, in T's type.
func (t *TensorDesc[T]) Set(dims ...int) error { return t.SetAs(DNNType[T](), dims...) }

// SetAs gives the descriptor element type typ and dims: a 16-bit type for
// an engine computing in reduced precision (Reduced.DNNType).
func (t *TensorDesc[T]) SetAs(typ cuda.DNNType, dims ...int) error {
	return t.SetIn(typ, cuda.LayoutNCHW, dims...)
}

// SetIn is SetAs for a tensor stored in layout l: channels-last for an
// engine computing so (Reduced.ChannelsLast).
func (t *TensorDesc[T]) SetIn(typ cuda.DNNType, l cuda.Layout, dims ...int) error {
	if t.Desc != nil && t.Desc.Type == typ && t.Desc.Layout == l && slices.Equal(t.Dims, dims) {
		return nil
	}
	t.Dims = append(t.Dims[:0], dims...)
	if t.Desc == nil {
		d, err := cuda.NewTensorDesc(typ, dims)
		if err == nil && l != cuda.LayoutNCHW {
			d.Layout = l
			err = d.Set(dims)
		}
		t.Desc = d
		return err
	}
	t.Desc.Type, t.Desc.Layout = typ, l
	return t.Desc.Set(dims)
}
