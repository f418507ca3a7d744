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
//
// Computing channels-last (layer.ChannelsLastEngine), along the channels
// of 4-D blobs, it copies each bottom by the orders of it and the top
// (copyChannels): one may be channels-last and the other row-major where
// the plan keeps one of them so.
type concatGPU[T layer.Float] struct {
	l            *concatLayer[T]
	reduced      bool
	channelsLast bool
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

// AcceptsChannelsLast: a 16-bit Concat along the channels copies in
// either order (layer.ChannelsLastEngine).
func (e *concatGPU[T]) AcceptsChannelsLast() bool { return e.reduced && e.l.axis == 1 }

// SetChannelsLast makes the engine copy by its blobs' orders.
func (e *concatGPU[T]) SetChannelsLast(on bool) error {
	if on && !e.AcceptsChannelsLast() {
		return fmt.Errorf("channels-last needs a 16-bit type and axis 1, not axis %d", e.l.axis)
	}
	e.channelsLast = on
	return nil
}

// copyBlob copies between bottom b's data (or diff) at part and its place
// in the top's at whole: by copyChannels where either is channels-last,
// else by copyPart.
func (e *concatGPU[T]) copyBlob(p axisPart, b, top *blob.Blob[T], part, whole cuda.DevicePtr, diff, toWhole bool) error {
	pm, wm := b.Data(), top.Data()
	if diff {
		pm, wm = b.Diff(), top.Diff()
	}
	if e.channelsLast && (b.ChannelsLast() || top.ChannelsLast()) {
		return e.copyChannels(p, b, top, part, whole, pm.Storage(), wm.Storage(), toWhole)
	}
	return e.copyPart(p, part, whole, pm.Storage(), wm.Storage(), toWhole)
}

// copyChannels copies between a part and its channels of the whole where
// one or both are channels-last (kernels/concat.cu's axis_copy_cl_*, or
// axis_copy_cl8's 16-byte vectors where both are, in one type, with
// channels counted in eights).
func (e *concatGPU[T]) copyChannels(p axisPart, b, top *blob.Blob[T], part, whole cuda.DevicePtr, partStorage, wholeStorage syncedmem.Storage, toWhole bool) error {
	src, dst, from, to, flag := whole, part, wholeStorage, partStorage, 0
	if toWhole {
		src, dst, from, to, flag = part, whole, partStorage, wholeStorage, 1
	}
	n, c, s := b.ChannelsLastDims()
	if b.ChannelsLast() && top.ChannelsLast() && from == to && c%8 == 0 && p.wholeAxis%8 == 0 && p.offset%8 == 0 {
		var a cuda.Args
		a.Int(n * c * s / 8).Int(c / 8).Int(p.wholeAxis / 8).Int(p.offset / 8).Int(flag).Ptr(src).Ptr(dst)
		return launch[float32](e.l.Context(), "concat.cu", "axis_copy_cl8", n*c*s/8, &a)
	}
	flags := func(on bool) int {
		if on {
			return 1
		}
		return 0
	}
	var a cuda.Args
	a.Int(n * c * s).Int(s).Int(c).Int(p.wholeAxis).Int(p.offset).Int(flags(b.ChannelsLast())).Int(flags(top.ChannelsLast())).Int(flag).Ptr(src).Ptr(dst)
	return launch[float32](e.l.Context(), "concat.cu", "axis_copy_cl_"+storageName(from)+"_"+storageName(to), n*c*s, &a)
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
		if err := e.copyBlob(p, b, top[0], g.Data(b), out, false, true); err != nil {
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
			if err := e.copyBlob(p, b, top[0], g.MutableDiff(b), dy, true, false); err != nil {
				return err
			}
		}
		p.offset += p.partAxis
	}
	return nil
}
