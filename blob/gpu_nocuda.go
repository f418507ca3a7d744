//go:build !cuda

package blob

import (
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// Without CUDA no memory can have its head on the device and no blob can
// have a device, so these are never called; they exist to keep one copy of
// the dispatch in ops.go.

const noDevice = "blob: device arithmetic in a build without CUDA (a head cannot be on the device)"

func gpuAxpy[T Float](n int, alpha T, x, y *syncedmem.SyncedMemory) { panic(noDevice) }
func gpuAsum[T Float](n int, x *syncedmem.SyncedMemory) T           { panic(noDevice) }
func gpuDot[T Float](n int, x, y *syncedmem.SyncedMemory) T         { panic(noDevice) }
func gpuScal[T Float](n int, alpha T, x *syncedmem.SyncedMemory)    { panic(noDevice) }

func gpuCopy(nbytes int, from, to *syncedmem.SyncedMemory) error { return cuda.ErrNoCUDA }
