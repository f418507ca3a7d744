// Package blob provides Blob, Caffe's N-dimensional array: the data that
// flows between layers and the parameters they learn, each with a second
// array of the same shape for gradients (the diff).
//
// A Blob[T] keeps its data and diff in two syncedmem.SyncedMemory, so either
// can live on the host, on a CUDA device, or both, and is copied only when
// read on the other side. Shapes, counts, offsets, axis indexing and the
// BlobProto conversions follow Caffe's blob.cpp exactly, including its legacy
// 4-D accessors and the legacy num/channels/height/width proto fields.
package blob

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/internal/sysmem"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// MaxAxes is the largest number of axes a blob can have (Caffe's
// kMaxBlobAxes).
const MaxAxes = 32

// Float is the element type of a blob: float32 or float64.
type Float = mathfn.Float

// Blob is an N-dimensional array of T with a gradient of the same shape.
// Create blobs with New.
//
// A Blob is not safe for concurrent use.
type Blob[T Float] struct {
	data, diff *syncedmem.SyncedMemory
	shape      []int
	count      int // product of shape
	capacity   int // elements data and diff can hold
	dev        *cuda.Device
	// storage is the device storage of the memories Reshape creates
	// (SetStorage); ShareData makes it the shared memory's.
	storage syncedmem.Storage
	// channelsLast says that the device copies hold the blob
	// channels-last (SetChannelsLast).
	channelsLast bool
}

// New returns a blob of the given shape. New[T]() with no dimensions gives
// a blob with no axes and no memory; Reshape it before use.
func New[T Float](shape ...int) (*Blob[T], error) {
	b := &Blob[T]{}
	if len(shape) == 0 {
		b.data, b.diff = syncedmem.New(0), syncedmem.New(0)
		return b, nil
	}
	if err := b.Reshape(shape); err != nil {
		return nil, err
	}
	return b, nil
}

// elemSize is sizeof(T).
func elemSize[T Float]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// Reshape changes the blob's shape. Like Caffe it keeps the allocation when
// the new count fits the capacity (the contents then stay as they were) and
// replaces data and diff by fresh, lazily allocated memory when it grows.
func (b *Blob[T]) Reshape(shape []int) error {
	count, err := shapeCount(shape)
	if err != nil {
		return err
	}
	if count > b.capacity || b.data == nil {
		if err := b.checkHostMemory(shape, count); err != nil {
			return err
		}
	}
	b.shape = append(b.shape[:0], shape...)
	b.count = count
	if count > b.capacity || b.data == nil {
		b.capacity = count
		b.replaceMemory()
	}
	return nil
}

// checkHostMemory refuses a shape whose data the process cannot allocate,
// before any memory is given to it: allocation is lazy, and the first
// access to a blob too large would end the process in the Go runtime's
// fatal "out of memory", naming nothing. The error goes up through the
// layer that reshaped the blob, which names itself. Only the data is
// counted: the diff may never be used (a net that only runs forward).
// A GPU-mode blob is left to the device's allocator, which returns an
// error of its own: its host copy may never be made.
func (b *Blob[T]) checkHostMemory(shape []int, count int) error {
	if b.dev != nil {
		return nil
	}
	need := uint64(count) * uint64(elemSize[T]())
	if need < sysmem.CheckFrom {
		return nil
	}
	if err := sysmem.Check(need, "shape "+fmt.Sprint(slices.Clone(shape))); err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	return nil
}

// shapeCount checks a shape as Caffe's Reshape does and returns its count.
// Its errors format a copy of the shape, so that shape does not escape and
// a caller's []int{...} literal stays off the heap (Reshape is called every
// iteration).
func shapeCount(shape []int) (int, error) {
	if len(shape) > MaxAxes {
		return 0, fmt.Errorf("blob: shape %v has %d axes, at most %d are allowed", slices.Clone(shape), len(shape), MaxAxes)
	}
	count := 1
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("blob: shape %v has negative dimension %d at axis %d", slices.Clone(shape), d, i)
		}
		if d != 0 && count > math.MaxInt32/d {
			return 0, fmt.Errorf("blob: shape %v: blob size exceeds INT_MAX (%d)", slices.Clone(shape), math.MaxInt32)
		}
		count *= d
	}
	return count, nil
}

// replaceMemory gives the blob new data and diff of its capacity, releasing
// the old ones' device and pinned buffers. Memory shared with another blob
// (ShareData, ShareDiff) is the other blob's to release, and stays.
func (b *Blob[T]) replaceMemory() {
	size := b.capacity * elemSize[T]()
	b.data, b.diff = syncedmem.New(size), syncedmem.New(size)
	if b.dev != nil {
		b.data.SetDevice(b.dev)
		b.diff.SetDevice(b.dev)
	}
	if b.storage != syncedmem.StorageNative {
		// Fresh memory of float32 elements (SetStorage refuses reduced
		// storage for float64) has no device copy: this cannot fail.
		if err := b.data.SetStorage(b.storage); err != nil {
			panic(err)
		}
		if err := b.diff.SetStorage(b.storage); err != nil {
			panic(err)
		}
	}
}

// SetStorage sets how the device copies of the data and the diff store
// their elements (see syncedmem.SyncedMemory.SetStorage), and the storage
// of the memory a Reshape that grows creates later. A reduced storage
// (FLOAT16, BFLOAT16) needs float32 elements. Data memory shared with
// another blob (ShareData: an in-place layer's top and bottom) is set for
// both blobs: they share one storage.
//
// The device pointers (GPUData, GPUDiff) of a reduced blob address 16-bit
// elements; the host accessors convert.
func (b *Blob[T]) SetStorage(s syncedmem.Storage) error {
	if s.Reduced() && elemSize[T]() != 4 {
		return fmt.Errorf("blob: %v storage needs float32 elements", s)
	}
	if b.data != nil {
		old := b.data.Storage()
		if err := b.data.SetStorage(s); err != nil {
			return fmt.Errorf("blob: data: %w", err)
		}
		if err := b.diff.SetStorage(s); err != nil {
			// The data's device copy, if any, is gone: going back
			// cannot fail.
			b.data.SetStorage(old)
			return fmt.Errorf("blob: diff: %w", err)
		}
	}
	b.storage = s
	return nil
}

// Storage returns how the device copy of the data stores its elements.
func (b *Blob[T]) Storage() syncedmem.Storage {
	if b.data != nil {
		return b.data.Storage()
	}
	return b.storage
}

// Reshape4 reshapes to the legacy 4-D shape (num, channels, height, width).
func (b *Blob[T]) Reshape4(num, channels, height, width int) error {
	return b.Reshape([]int{num, channels, height, width})
}

// ReshapeProto reshapes to a BlobShape.
func (b *Blob[T]) ReshapeProto(s *caffepb.BlobShape) error {
	shape, err := dimsToShape(s.GetDim())
	if err != nil {
		return err
	}
	return b.Reshape(shape)
}

// ReshapeLike reshapes b to other's shape.
func (b *Blob[T]) ReshapeLike(other *Blob[T]) error { return b.Reshape(other.shape) }

// Shape returns the dimensions. The slice belongs to the blob: do not
// modify it, and copy it if you need it after the next Reshape.
func (b *Blob[T]) Shape() []int { return b.shape }

// NumAxes returns the number of axes.
func (b *Blob[T]) NumAxes() int { return len(b.shape) }

// Count returns the number of elements.
func (b *Blob[T]) Count() int { return b.count }

// Capacity returns the number of elements the current allocation holds.
func (b *Blob[T]) Capacity() int { return b.capacity }

// CountRange returns the product of the dimensions of axes [start, end).
// It panics unless 0 <= start <= end <= NumAxes, as slicing would.
func (b *Blob[T]) CountRange(start, end int) int {
	if start < 0 || start > end || end > len(b.shape) {
		panic(fmt.Sprintf("blob: CountRange(%d, %d) out of range for a blob with %d axes", start, end, len(b.shape)))
	}
	n := 1
	for _, d := range b.shape[start:end] {
		n *= d
	}
	return n
}

// CountFrom returns the product of the dimensions from axis start to the
// last. It panics unless 0 <= start <= NumAxes.
func (b *Blob[T]) CountFrom(start int) int { return b.CountRange(start, len(b.shape)) }

// CanonicalAxisIndex turns an axis index that may be negative (counting from
// the end: -1 is the last axis) into one in [0, NumAxes).
func (b *Blob[T]) CanonicalAxisIndex(axis int) (int, error) {
	n := len(b.shape)
	if axis < -n || axis >= n {
		return 0, fmt.Errorf("blob: axis %d out of range for %d-D blob with shape %s", axis, n, b.ShapeString())
	}
	if axis < 0 {
		return axis + n, nil
	}
	return axis, nil
}

// ShapeAt returns the dimension of an axis, which may be negative.
func (b *Blob[T]) ShapeAt(axis int) (int, error) {
	i, err := b.CanonicalAxisIndex(axis)
	if err != nil {
		return 0, err
	}
	return b.shape[i], nil
}

// LegacyShape returns the dimension for Caffe's old 4-D accessors: an index
// in [-NumAxes, NumAxes) as ShapeAt, any other index 1 (so a 2-D blob has
// height and width 1). Blobs of more than 4 axes have no legacy shape.
func (b *Blob[T]) LegacyShape(i int) (int, error) {
	if len(b.shape) > 4 {
		return 0, fmt.Errorf("blob: cannot use legacy accessors on a blob with %d > 4 axes (shape %s)", len(b.shape), b.ShapeString())
	}
	if i < -4 || i >= 4 {
		return 0, fmt.Errorf("blob: legacy axis %d is not in [-4, 4)", i)
	}
	if i >= len(b.shape) || i < -len(b.shape) {
		return 1, nil
	}
	return b.ShapeAt(i)
}

// mustLegacy is LegacyShape for the four named accessors, whose callers
// have checked the number of axes.
func (b *Blob[T]) mustLegacy(i int) int {
	d, err := b.LegacyShape(i)
	if err != nil {
		panic(err)
	}
	return d
}

// Num returns the legacy first dimension. It panics for blobs of more than
// 4 axes; layers that use it check the number of axes when they set up.
func (b *Blob[T]) Num() int { return b.mustLegacy(0) }

// Channels returns the legacy second dimension (see Num).
func (b *Blob[T]) Channels() int { return b.mustLegacy(1) }

// Height returns the legacy third dimension (see Num).
func (b *Blob[T]) Height() int { return b.mustLegacy(2) }

// Width returns the legacy fourth dimension (see Num).
func (b *Blob[T]) Width() int { return b.mustLegacy(3) }

// Offset returns the index of element (n, c, h, w) in a legacy 4-D blob:
// ((n*C + c)*H + h)*W + w. Like Caffe it allows each index up to and
// including its dimension (one past the end), which lets callers compute the
// end of a range. It panics on indices out of that range.
func (b *Blob[T]) Offset(n, c, h, w int) int {
	num, ch, ht, wd := b.Num(), b.Channels(), b.Height(), b.Width()
	if n < 0 || n > num || c < 0 || c > ch || h < 0 || h > ht || w < 0 || w > wd {
		panic(fmt.Sprintf("blob: Offset(%d, %d, %d, %d) out of range for shape %s", n, c, h, w, b.ShapeString()))
	}
	return ((n*ch+c)*ht+h)*wd + w
}

// OffsetIndices returns the row-major index of the element at indices,
// which address the leading len(indices) axes (missing trailing indices are
// 0). It panics if an index is out of [0, dimension) or there are more
// indices than axes.
func (b *Blob[T]) OffsetIndices(indices []int) int {
	if len(indices) > len(b.shape) {
		panic(fmt.Sprintf("blob: %d indices for a blob with %d axes", len(indices), len(b.shape)))
	}
	off := 0
	for i, d := range b.shape {
		off *= d
		if i < len(indices) {
			if indices[i] < 0 || indices[i] >= d {
				panic(fmt.Sprintf("blob: index %d = %d out of range for shape %s", i, indices[i], b.ShapeString()))
			}
			off += indices[i]
		}
	}
	return off
}

// ShapeString returns the dimensions and the count, e.g. "2 3 4 5 (120)".
func (b *Blob[T]) ShapeString() string {
	var sb strings.Builder
	for _, d := range b.shape {
		sb.WriteString(strconv.Itoa(d))
		sb.WriteByte(' ')
	}
	sb.WriteByte('(')
	sb.WriteString(strconv.Itoa(b.count))
	sb.WriteByte(')')
	return sb.String()
}

// SameShape reports whether the blob's shape is the one other has.
func (b *Blob[T]) SameShape(other *Blob[T]) bool {
	if len(b.shape) != len(other.shape) {
		return false
	}
	for i, d := range b.shape {
		if other.shape[i] != d {
			return false
		}
	}
	return true
}

// Data returns the memory holding the data.
func (b *Blob[T]) Data() *syncedmem.SyncedMemory { return b.data }

// Diff returns the memory holding the diff.
func (b *Blob[T]) Diff() *syncedmem.SyncedMemory { return b.diff }

// SetDevice makes the blob a GPU-mode blob of device d: its device buffers
// are allocated on d and its host buffers are pinned. Call it before the
// blob's memory is first used; memory already allocated stays where it is.
func (b *Blob[T]) SetDevice(d *cuda.Device) {
	b.dev = d
	b.data.SetDevice(d)
	b.diff.SetDevice(d)
}

// Device returns the device set by SetDevice, or nil for a CPU blob.
func (b *Blob[T]) Device() *cuda.Device { return b.dev }

// Close releases the blob's device and pinned host memory (see
// syncedmem.SyncedMemory.Close). The blob can be used again afterwards; its
// contents are then zero.
func (b *Blob[T]) Close() error {
	errData := b.data.Close()
	if err := b.diff.Close(); err != nil {
		return err
	}
	return errData
}

// asT views host bytes as elements of T.
func asT[T Float](p []byte, n int) []T {
	if n == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(p))), n)
}

// asBytes views elements of T as host bytes.
func asBytes[T Float](v []T) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*elemSize[T]())
}

// CPUData returns the data on the host for reading (Count elements). Do not
// write to it: use MutableCPUData, which tells the memory that the host copy
// changed.
func (b *Blob[T]) CPUData() []T {
	b.orderOf(b.data)
	return asT[T](b.data.CPUData(), b.count)
}

// MutableCPUData returns the data on the host for writing.
func (b *Blob[T]) MutableCPUData() []T {
	b.orderOf(b.data)
	return asT[T](b.data.MutableCPUData(), b.count)
}

// CPUDiff returns the diff on the host for reading.
func (b *Blob[T]) CPUDiff() []T {
	b.orderOf(b.diff)
	return asT[T](b.diff.CPUData(), b.count)
}

// MutableCPUDiff returns the diff on the host for writing.
func (b *Blob[T]) MutableCPUDiff() []T {
	b.orderOf(b.diff)
	return asT[T](b.diff.MutableCPUData(), b.count)
}

// SetCPUData makes v (at least Count elements) the blob's host data without
// copying. Like Caffe, if the data memory is larger or smaller than the
// blob's count it is first replaced by memory of exactly that size.
func (b *Blob[T]) SetCPUData(v []T) error {
	if len(v) < b.count {
		return fmt.Errorf("blob: SetCPUData: %d elements for a blob of count %d", len(v), b.count)
	}
	b.fitMemory()
	return b.data.SetCPUData(asBytes(v))
}

// SetCPUDiff makes v (at least Count elements) the blob's host diff without
// copying.
func (b *Blob[T]) SetCPUDiff(v []T) error {
	if len(v) < b.count {
		return fmt.Errorf("blob: SetCPUDiff: %d elements for a blob of count %d", len(v), b.count)
	}
	b.fitMemory()
	return b.diff.SetCPUData(asBytes(v))
}

// fitMemory makes data and diff exactly count elements, as Caffe's
// set_cpu_data does so that host and device sizes stay equal.
func (b *Blob[T]) fitMemory() {
	if b.data.Size() != b.count*elemSize[T]() {
		b.capacity = b.count
		b.replaceMemory()
	}
}

// GPUData returns the data on the device for reading.
func (b *Blob[T]) GPUData() (cuda.DevicePtr, error) {
	b.orderOf(b.data)
	return b.data.GPUData()
}

// MutableGPUData returns the data on the device for writing.
func (b *Blob[T]) MutableGPUData() (cuda.DevicePtr, error) {
	b.orderOf(b.data)
	return b.data.MutableGPUData()
}

// GPUDiff returns the diff on the device for reading.
func (b *Blob[T]) GPUDiff() (cuda.DevicePtr, error) {
	b.orderOf(b.diff)
	return b.diff.GPUData()
}

// MutableGPUDiff returns the diff on the device for writing.
func (b *Blob[T]) MutableGPUDiff() (cuda.DevicePtr, error) {
	b.orderOf(b.diff)
	return b.diff.MutableGPUData()
}

// ShareData makes b use other's data memory (Caffe's ShareData): writes
// through either blob are seen by both. The counts must be equal.
func (b *Blob[T]) ShareData(other *Blob[T]) error {
	if b.count != other.count {
		return fmt.Errorf("blob: ShareData: count %d differs from the other blob's %d", b.count, other.count)
	}
	b.data = other.data
	b.data.MarkShared()
	b.storage = b.data.Storage()
	return nil
}

// BorrowData makes b use other's data memory, which holds at least b's
// count, for a b that is only ever used while other's values are dead: a
// test net's activations in the train net's, which the next training
// iteration overwrites anyway. Unlike ShareData the counts may differ, and
// the memory is not marked shared: each blob's own net may still exchange
// it with another of its blobs (SwapData), which never makes two blobs of
// one net alias. b keeps the memory until a Reshape beyond its own
// capacity. b's own data memory, which must not be shared, is released
// with its values.
func (b *Blob[T]) BorrowData(other *Blob[T]) error {
	switch {
	case other.data == nil || other.capacity < b.count:
		return fmt.Errorf("blob: BorrowData: the other blob holds %d elements, %d needed", other.capacity, b.count)
	case b.dev != other.dev:
		return errors.New("blob: BorrowData: the blobs are on different devices")
	case b.data == nil:
		return errors.New("blob: BorrowData: the blob has no shape yet")
	case b.data.Shared():
		return errors.New("blob: BorrowData: the blob's data memory is shared with another blob")
	case b.data.Storage() != other.data.Storage():
		return fmt.Errorf("blob: BorrowData: the other blob's data is of %v storage, the blob's %v", other.data.Storage(), b.data.Storage())
	}
	// Its own memory, which set-up may have touched (cuDNN times its
	// algorithms on a layer's top), is released: its values go.
	if err := b.data.Close(); err != nil {
		return err
	}
	b.data = other.data
	// Both of b's memories still hold its (possibly smaller) capacity.
	b.capacity = min(b.capacity, other.capacity)
	return nil
}

// PlaceData makes m, memory of at least Count elements on the blob's
// device, the blob's data: a net's memory plan puts blobs whose values are
// never needed at the same time in one memory. Unlike ShareData the sizes
// may differ; the blob's capacity becomes what both its memories hold, so
// that a Reshape beyond it gives the blob memory of its own again, which
// never aliases another blob. The memory the blob used before is released
// unless it is marked shared (another blob may still use it). m is not
// marked shared here: the plan that places several blobs in it does that,
// so that no layer swaps it away (SwapData).
func (b *Blob[T]) PlaceData(m *syncedmem.SyncedMemory) error {
	if err := b.checkPlace(m, "PlaceData"); err != nil {
		return err
	}
	if err := releaseUnshared(b.data, m); err != nil {
		return err
	}
	b.data = m
	b.capacity = min(b.data.Size(), b.diff.Size()) / elemSize[T]()
	return nil
}

// PlaceDiff is PlaceData for the diff.
func (b *Blob[T]) PlaceDiff(m *syncedmem.SyncedMemory) error {
	if err := b.checkPlace(m, "PlaceDiff"); err != nil {
		return err
	}
	if err := releaseUnshared(b.diff, m); err != nil {
		return err
	}
	b.diff = m
	b.capacity = min(b.data.Size(), b.diff.Size()) / elemSize[T]()
	return nil
}

func (b *Blob[T]) checkPlace(m *syncedmem.SyncedMemory, op string) error {
	switch {
	case b.data == nil:
		return fmt.Errorf("blob: %s: the blob has no shape yet", op)
	case m == nil || m.Size() < b.count*elemSize[T]():
		size := 0
		if m != nil {
			size = m.Size()
		}
		return fmt.Errorf("blob: %s: the memory holds %d bytes, %d needed", op, size, b.count*elemSize[T]())
	case m.Device() != b.dev:
		return fmt.Errorf("blob: %s: the memory belongs to another device", op)
	case m.Storage() != b.Storage():
		return fmt.Errorf("blob: %s: the memory is of %v storage, the blob's is %v", op, m.Storage(), b.Storage())
	}
	return nil
}

// releaseUnshared releases old, which is being replaced by m, unless other
// blobs may still use it.
func releaseUnshared(old, m *syncedmem.SyncedMemory) error {
	if old == m || old.Shared() {
		return nil
	}
	return old.Close()
}

// ShareDiff makes b use other's diff memory. The counts must be equal.
func (b *Blob[T]) ShareDiff(other *Blob[T]) error {
	if b.count != other.count {
		return fmt.Errorf("blob: ShareDiff: count %d differs from the other blob's %d", b.count, other.count)
	}
	b.diff = other.diff
	b.diff.MarkShared()
	return nil
}

// SwapData exchanges the data memory of b and other if DataSwappable, and
// reports whether it did: an in-place layer that needs its input later
// (cuDNN's batch normalization) computes into a scratch blob and swaps,
// where it would otherwise copy the input aside. A slice or pointer taken
// from either blob's data before then sees the other's.
func (b *Blob[T]) SwapData(other *Blob[T]) bool {
	if !b.DataSwappable(other) {
		return false
	}
	b.data, other.data = other.data, b.data
	return true
}

// DataSwappable reports whether SwapData would swap: the blobs have the
// same count and capacity on one device, their data memories the same
// storage, and no other blob shares either one's data memory.
func (b *Blob[T]) DataSwappable(other *Blob[T]) bool {
	return b.swappable(other) && !b.data.Shared() && !other.data.Shared() &&
		b.data.Storage() == other.data.Storage()
}

// ExchangeData exchanges the data memories of b and other as SwapData
// does, but also memories that are marked shared (a net's memory plan
// placed them), and returns an error instead of declining: for a layer
// that exchanges them for part of a pass and gives each its own back
// (exchanges again) before any other blob sharing either memory is used
// (cuDNN's BatchNorm in place, layer.TopDataExchanger). The blobs must
// have the same count, on one device, in memories of the same storage
// that hold it. Each blob's capacity becomes what its new memories hold.
func (b *Blob[T]) ExchangeData(other *Blob[T]) error {
	switch {
	case b == other || b.data == nil || other.data == nil || b.diff == nil || other.diff == nil:
		return errors.New("blob: ExchangeData: two distinct blobs with shapes are needed")
	case b.count != other.count:
		return fmt.Errorf("blob: ExchangeData: count %d differs from the other blob's %d", b.count, other.count)
	case b.dev != other.dev:
		return errors.New("blob: ExchangeData: the blobs are on different devices")
	case b.data.Storage() != other.data.Storage():
		return fmt.Errorf("blob: ExchangeData: the other blob's data is of %v storage, the blob's %v", other.data.Storage(), b.data.Storage())
	}
	b.data, other.data = other.data, b.data
	b.recountCapacity()
	other.recountCapacity()
	return nil
}

// recountCapacity sets the capacity to what both memories hold.
func (b *Blob[T]) recountCapacity() {
	b.capacity = min(b.data.Size(), b.diff.Size()) / elemSize[T]()
}

// SwapDiff is SwapData for the diffs.
func (b *Blob[T]) SwapDiff(other *Blob[T]) bool {
	if !b.DiffSwappable(other) {
		return false
	}
	b.diff, other.diff = other.diff, b.diff
	return true
}

// DiffSwappable is DataSwappable for the diffs.
func (b *Blob[T]) DiffSwappable(other *Blob[T]) bool {
	return b.swappable(other) && !b.diff.Shared() && !other.diff.Shared() &&
		b.diff.Storage() == other.diff.Storage()
}

// swappable reports whether b and other have memory of the same count and
// capacity on the same device.
func (b *Blob[T]) swappable(other *Blob[T]) bool {
	return b != other && b.count == other.count && b.capacity == other.capacity && b.dev == other.dev &&
		b.data != nil && other.data != nil && b.diff != nil && other.diff != nil
}
