package solver

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/mathfn"
)

// applyUpdateGPU runs the update on the device, with a GPU engine kept
// between iterations so that an update allocates nothing.
func (s *Solver[T]) applyUpdateGPU(rate float64) error {
	g, ok := s.gpu.(*mathfn.GPU[T])
	if !ok {
		ng := mathfn.NewGPU[T](s.dev)
		g = &ng
		s.gpu = g
	}
	g.ResetErr()
	return applyUpdate[T](s, blob.GPUView[T]{GPU: g}, rate)
}
