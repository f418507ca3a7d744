package layer

import "github.com/gocaffe/gocaffe/blob"

// ForwardGPU computes the product with cuBLAS.
func (l *InnerProduct[T]) ForwardGPU(bottom, top []*blob.Blob[T]) error {
	return innerProductForward[T](l, l.gpu(), bottom, top)
}

// BackwardGPU computes the gradients with cuBLAS.
func (l *InnerProduct[T]) BackwardGPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return innerProductBackward[T](l, l.gpu(), top, propagateDown, bottom)
}
