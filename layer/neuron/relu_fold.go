package neuron

import "github.com/gocaffe/gocaffe/layer"

// Activation lets an inference plan apply the ReLU in the epilogue of the
// convolution or inner product before it (layer.Activator).
func (l *reluLayer[T]) Activation() (layer.Activation, bool) {
	return layer.Activation{Kind: layer.ActReLU, Slope: float64(l.slope)}, true
}
