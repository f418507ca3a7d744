//go:build !cuda

package layer

import (
	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
)

// gpuLoss is never reached without CUDA: no layer can have a device.
func gpuLoss[T Float](b *Base[T], top []*blob.Blob[T]) (T, error) { return 0, cuda.ErrNoCUDA }
