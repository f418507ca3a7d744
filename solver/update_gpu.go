package solver

import "github.com/gocaffe/gocaffe/device"

// applyUpdateGPU runs the update on the device, with a view of the context
// kept between iterations so that an update allocates nothing.
func (s *Solver[T]) applyUpdateGPU(rate float64) error {
	if s.gpu == nil {
		v, err := device.NewGPUView[T](s.ctx)
		if err != nil {
			return err
		}
		s.gpu = v
	}
	s.gpu.ResetErr()
	return applyUpdate[T](s, s.gpu, rate)
}
