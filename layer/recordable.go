package layer

import "fmt"

// Recordable returns nil when a CUDA graph may record l's passes and
// replay them: l computes on the GPU and its type's Spec says its GPU
// passes replay faithfully (Spec.CUDAGraph). Otherwise the error says which
// of the two it is not.
func Recordable[T Float](l Layer[T]) error {
	if !l.LayerBase().engineOnGPU {
		return fmt.Errorf("layer %q (%s) computes on the host", l.LayerBase().Name(), l.Type())
	}
	if s := specOf(l); s == nil || !s.CUDAGraph {
		return fmt.Errorf("layer %q (%s) is not among the types known to replay faithfully from a CUDA graph", l.LayerBase().Name(), l.Type())
	}
	return nil
}
