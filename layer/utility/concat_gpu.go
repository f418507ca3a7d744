package utility

import (
	"fmt"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// concatGPU is Concat's GPU half. In a 16-bit type (layer.ReducedEngine)
// it copies between blobs of any storage, converting each value on the
// way where a bottom's storage is not the top's (GoogLeNet's inception
// outputs stay in 16 bits).
type concatGPU[T layer.Float] struct {
	l       *concatLayer[T]
	reduced bool
}

func newConcatGPU[T layer.Float](l *concatLayer[T]) layer.Engine[T] { return &concatGPU[T]{l: l} }

// SetReduced makes the engine copy between 16-bit and FP32 blobs as they
// are stored (StorageNative: T's copies alone).
func (e *concatGPU[T]) SetReduced(s syncedmem.Storage) error {
	var zero T
	if _, ok := any(zero).(float64); ok && s.Reduced() {
		return fmt.Errorf("%v computation needs float32 blobs, not float64", s)
	}
	e.reduced = s.Reduced()
	return nil
}

// copyPart copies between a part and its place in the whole: T's kernel
// where both are stored natively, else the converting one for their
// storages (kernels/concat.cu).
func (e *concatGPU[T]) copyPart(p axisPart, part, whole cuda.DevicePtr, partStorage, wholeStorage syncedmem.Storage, toWhole bool) error {
	c := e.l.Context()
	if !e.reduced || (!partStorage.Reduced() && !wholeStorage.Reduced()) {
		return copyAxisPartGPU[T](c, p, part, whole, toWhole)
	}
	src, dst, from, to, flag := whole, part, wholeStorage, partStorage, 0
	if toWhole {
		src, dst, from, to, flag = part, whole, partStorage, wholeStorage, 1
	}
	var a cuda.Args
	a.Int(p.count()).Int(p.inner).Int(p.partAxis).Int(p.wholeAxis).Int(p.offset).Int(flag).Ptr(src).Ptr(dst)
	return launch[float32](c, "concat.cu", "axis_copy_"+storageName(from)+"_"+storageName(to), p.count(), &a)
}

// storageName is a storage's name in the converting kernels' names.
func storageName(s syncedmem.Storage) string {
	switch s {
	case syncedmem.StorageFloat16:
		return "f16"
	case syncedmem.StorageBFloat16:
		return "bf16"
	}
	return "f32"
}

// count is the number of elements of the part: one kernel thread each.
func (p axisPart) count() int { return p.outer * p.partAxis * p.inner }

// copyAxisPartGPU is copyAxisPartCPU on the device: part and whole are
// device arrays, and the copy goes into whole when toWhole is set.
func copyAxisPartGPU[T layer.Float](c *device.Context, p axisPart, part, whole cuda.DevicePtr, toWhole bool) error {
	src, dst, flag := whole, part, 0
	if toWhole {
		src, dst, flag = part, whole, 1
	}
	var a cuda.Args
	a.Int(p.count()).Int(p.inner).Int(p.partAxis).Int(p.wholeAxis).Int(p.offset).Int(flag).Ptr(src).Ptr(dst)
	return launch[T](c, "concat.cu", "axis_copy", p.count(), &a)
}

// Forward copies each bottom into its range of the top on the device.
func (e *concatGPU[T]) Forward(bottom, top []*blob.Blob[T]) error {
	l := e.l
	if len(bottom) == 1 {
		return nil
	}
	g := l.GPU()
	out := g.MutableData(top[0])
	p := axisPart{outer: l.outer, inner: l.inner, wholeAxis: top[0].Shape()[l.axis]}
	for _, b := range bottom {
		p.partAxis = b.Shape()[l.axis]
		if err := e.copyPart(p, g.Data(b), out, b.Data().Storage(), top[0].Data().Storage(), true); err != nil {
			return err
		}
		p.offset += p.partAxis
	}
	return nil
}

// Backward hands each bottom its range of the top's diff on the device.
func (e *concatGPU[T]) Backward(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	l := e.l
	if len(bottom) == 1 {
		return nil
	}
	g := l.GPU()
	dy := g.Diff(top[0])
	p := axisPart{outer: l.outer, inner: l.inner, wholeAxis: top[0].Shape()[l.axis]}
	for i, b := range bottom {
		p.partAxis = b.Shape()[l.axis]
		if propagateDown[i] {
			if err := e.copyPart(p, g.MutableDiff(b), dy, b.Diff().Storage(), top[0].Diff().Storage(), false); err != nil {
				return err
			}
		}
		p.offset += p.partAxis
	}
	return nil
}
