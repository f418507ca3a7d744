//go:build !cuda

package layer

import "github.com/gocaffe/gocaffe/cuda"

// Without CUDA no layer has a device, so batches stay on the host.

type batchDevice struct{}

type prefetchDevice[T Float] struct{}

func initDevice[T Float](p *prefetcher[T], d *cuda.Device) error {
	if d != nil {
		return cuda.ErrNoCUDA
	}
	return nil
}

func pushToDevice[T Float](p *prefetcher[T], b *batch[T]) error { return nil }

func closeDevice[T Float](p *prefetcher[T]) error { return nil }
