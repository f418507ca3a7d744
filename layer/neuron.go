package layer

import "github.com/gocaffe/gocaffe/blob"

// neuron is the base of the element-wise layers (Caffe's NeuronLayer): one
// bottom, one top of the same shape, which may be the bottom itself (in
// place).
type neuron[T Float] struct{ Base[T] }

// Counts returns one bottom and one top.
func (*neuron[T]) Counts() BlobCounts { return BlobCounts{Bottom: Exactly(1), Top: Exactly(1)} }

// InPlace: element-wise layers run in place (those whose backward pass
// needs x keep a copy of it, see bottomCopy).
func (*neuron[T]) InPlace() bool { return true }

// LayerSetUp has nothing to do for most element-wise layers.
func (*neuron[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

// Reshape gives the top the bottom's shape.
func (*neuron[T]) Reshape(bottom, top []*blob.Blob[T]) error { return top[0].ReshapeLike(bottom[0]) }
