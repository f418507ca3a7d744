//go:build !cuda

package solver

import "github.com/gocaffe/gocaffe/cuda"

// applyUpdateGPU is never reached without CUDA: no solver can have a device.
func (s *Solver[T]) applyUpdateGPU(rate float64) error { return cuda.ErrNoCUDA }
