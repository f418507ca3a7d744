// Package syncedmem provides SyncedMemory, Caffe's lazily synchronised pair
// of host and device buffers.
//
// A SyncedMemory holds up to two copies of the same bytes, one in host memory
// and one on a CUDA device, and a head that says which copy is current:
//
//	Uninitialized  nothing allocated yet
//	HeadAtCPU      the host copy is current (the device copy, if any, is stale)
//	HeadAtGPU      the device copy is current (the host copy, if any, is stale)
//	Synced         both copies hold the same bytes
//
// Buffers are allocated on first access and zero filled. Reading a copy that
// is stale copies the current one over it; asking for a mutable copy moves
// the head there. The transitions are exactly those of Caffe's
// syncedmem.cpp.
//
// The device copy may hold float32 elements as 16-bit floats, half the
// bytes (SetStorage): copies between host and device then convert.
//
// In a build without the `cuda` tag every device operation returns an error
// wrapping cuda.ErrNoCUDA and leaves the state unchanged.
package syncedmem

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/gocaffe/gocaffe/cuda"
)

// Head says which copy of a SyncedMemory is current.
type Head int

// The four heads of Caffe's SyncedMemory.
const (
	Uninitialized Head = iota
	HeadAtCPU
	HeadAtGPU
	Synced
)

// String returns Caffe's name for the head.
func (h Head) String() string {
	switch h {
	case Uninitialized:
		return "UNINITIALIZED"
	case HeadAtCPU:
		return "HEAD_AT_CPU"
	case HeadAtGPU:
		return "HEAD_AT_GPU"
	case Synced:
		return "SYNCED"
	}
	return fmt.Sprintf("Head(%d)", int(h))
}

// DeviceError is the panic value of the host accessors (CPUData,
// MutableCPUData) when copying the device copy down fails. Those accessors
// return no error because on a healthy device the copy cannot fail; a failure
// means the device itself is broken. Callers at API boundaries (a net's
// Forward, a solver's Step) recover it and return it as an error.
type DeviceError struct {
	Op  string // what was being done, e.g. "copy device to host"
	Err error  // the CUDA error
}

func (e *DeviceError) Error() string { return "syncedmem: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the underlying CUDA error.
func (e *DeviceError) Unwrap() error { return e.Err }

// SyncedMemory is a host buffer and a device buffer of Size bytes kept in
// sync lazily. The zero value is not usable; create one with New.
//
// A SyncedMemory is not safe for concurrent use.
type SyncedMemory struct {
	size int
	head Head

	cpu    []byte       // host copy, len(cpu) >= size once allocated
	ownCPU bool         // cpu was allocated here (and is released by Close)
	pinDev *cuda.Device // non-nil when cpu is pinned memory of that device

	gpu    cuda.DevicePtr // device copy
	hasGPU bool           // gpu is valid (a size-0 buffer may be the null pointer)
	ownGPU bool           // gpu was allocated here (and is freed by Close)
	// gpuBytes, when positive, is the size in device bytes of shared device
	// memory smaller than DeviceSize (SetSharedGPUData); copies move no more
	// than it.
	gpuBytes int
	gpuDev   *cuda.Device // the device gpu lives on

	// Safety nets for memory that is dropped without Close: the garbage
	// collector then frees the device and pinned buffers. Close stops them.
	gpuCleanup, cpuCleanup runtime.Cleanup

	// dev is the device this memory belongs to: device buffers are allocated
	// there and, because the memory then serves a GPU-mode blob, the host
	// buffer is pinned. nil means host-only until a device buffer is asked
	// for, which then uses cuda.DefaultDevice.
	dev *cuda.Device

	// shared says that more than one blob has used this memory (blob's
	// ShareData and ShareDiff): such memory must keep its identity, so
	// blob refuses to swap it.
	shared bool

	// storage is how the device copy stores the elements (SetStorage).
	storage Storage
	// cl is the order of a reduced device copy (SetChannelsLast).
	cl channelsLast

	// writes counts the accessors that may have written the memory (see
	// Writes).
	writes uint64
}

// Writes returns how many times the memory has been handed out for
// writing or marked written (the Mutable accessors, SetCPUData,
// SetGPUData, MarkDeviceWritten): a value unchanged since an earlier call
// means no writes through those since, so that what a net computed from
// the memory then (an inference plan's folded weights) still holds. A
// writer keeping a slice from an earlier Mutable call is not seen.
func (m *SyncedMemory) Writes() uint64 { return m.writes }

// MarkShared records that another blob uses this memory too.
func (m *SyncedMemory) MarkShared() { m.shared = true }

// Shared reports whether MarkShared was called.
func (m *SyncedMemory) Shared() bool { return m.shared }

// New returns a SyncedMemory of size bytes with nothing allocated yet.
// It panics if size is negative.
func New(size int) *SyncedMemory {
	if size < 0 {
		panic(fmt.Sprintf("syncedmem: negative size %d", size))
	}
	return &SyncedMemory{size: size}
}

// GPUDevice returns the device that holds the device copy, or nil if there
// is none.
func (m *SyncedMemory) GPUDevice() *cuda.Device { return m.gpuDev }

// Pinned reports whether the host copy is pinned (page-locked) memory.
func (m *SyncedMemory) Pinned() bool { return m.pinDev != nil }

// Size returns the size in bytes of the host copy.
func (m *SyncedMemory) Size() int { return m.size }

// DeviceSize returns the size in bytes of the device copy: Size, or Size/2
// for a reduced storage.
func (m *SyncedMemory) DeviceSize() int {
	if m.storage.Reduced() {
		return m.size / 2
	}
	return m.size
}

// Storage returns how the device copy stores the elements.
func (m *SyncedMemory) Storage() Storage { return m.storage }

// SetStorage sets how the device copy stores the elements. A reduced
// storage needs float32 elements: a Size that is a multiple of 4. Setting
// the storage the memory has already does nothing.
//
// A device copy of the old storage is released: when it is current (head
// at the GPU) it is first copied to the host, and the head is then
// HEAD_AT_CPU (it stays UNINITIALIZED or HEAD_AT_CPU otherwise). The next
// device access allocates DeviceSize bytes of the new storage. Device
// memory the memory does not own (SetGPUData, SetSharedGPUData) cannot be
// released: that is an error, and nothing changes.
func (m *SyncedMemory) SetStorage(s Storage) error {
	switch {
	case s == m.storage:
		return nil
	case !s.valid():
		return fmt.Errorf("syncedmem: SetStorage: unknown storage %v", s)
	case s.Reduced() && m.size%4 != 0:
		return fmt.Errorf("syncedmem: SetStorage: %v storage needs float32 elements, size %d is not a multiple of 4", s, m.size)
	case m.hasGPU && !m.ownGPU:
		return fmt.Errorf("syncedmem: SetStorage %v: the device copy is borrowed memory (SetGPUData), which cannot be released", s)
	}
	if m.hasGPU {
		if m.head == HeadAtGPU {
			if err := m.copyToHost(); err != nil {
				return fmt.Errorf("syncedmem: SetStorage %v: %w", s, err)
			}
		}
		if m.head == HeadAtGPU || m.head == Synced {
			m.head = HeadAtCPU
		}
		err := m.releaseGPU()
		m.setStorage(s)
		if err != nil {
			return fmt.Errorf("syncedmem: SetStorage %v: release the device copy: %w", s, err)
		}
		return nil
	}
	m.setStorage(s)
	return nil
}

// setStorage sets the storage, and row-major order with a native one.
func (m *SyncedMemory) setStorage(s Storage) {
	m.storage = s
	if !s.Reduced() {
		m.cl = channelsLast{}
	}
}

// Head returns which copy is current.
func (m *SyncedMemory) Head() Head { return m.head }

// SetDevice makes this memory belong to device d: device buffers are
// allocated on d and the host buffer, if allocated after this call, is pinned
// so that copies to and from d are fast and can be asynchronous. It does not
// move memory that is already allocated.
func (m *SyncedMemory) SetDevice(d *cuda.Device) { m.dev = d }

// Device returns the device set by SetDevice, or nil.
func (m *SyncedMemory) Device() *cuda.Device { return m.dev }

// CPUData returns the host copy for reading, bringing it up to date first.
// The caller must not write to it; use MutableCPUData for that. The slice
// has length Size.
func (m *SyncedMemory) CPUData() []byte {
	m.toCPU()
	return m.cpu[:m.size]
}

// MutableCPUData returns the host copy for writing, bringing it up to date
// first and marking it as the only current copy.
func (m *SyncedMemory) MutableCPUData() []byte {
	m.toCPU()
	m.head = HeadAtCPU
	m.writes++
	return m.cpu[:m.size]
}

// SetCPUData makes buf the host copy. The memory does not take ownership:
// Close never releases buf. buf must hold at least Size bytes.
func (m *SyncedMemory) SetCPUData(buf []byte) error {
	if len(buf) < m.size {
		return fmt.Errorf("syncedmem: SetCPUData: buffer of %d bytes is smaller than the memory's size %d", len(buf), m.size)
	}
	if err := m.releaseCPU(); err != nil {
		return err
	}
	m.cpu, m.ownCPU, m.pinDev = buf, false, nil
	m.head = HeadAtCPU
	m.writes++
	return nil
}

// GPUData returns the device copy for reading, bringing it up to date first.
func (m *SyncedMemory) GPUData() (cuda.DevicePtr, error) {
	if err := m.toGPU(); err != nil {
		return 0, err
	}
	return m.gpu, nil
}

// MutableGPUData returns the device copy for writing, bringing it up to date
// first and marking it as the only current copy.
func (m *SyncedMemory) MutableGPUData() (cuda.DevicePtr, error) {
	if err := m.toGPU(); err != nil {
		return 0, err
	}
	m.head = HeadAtGPU
	m.writes++
	return m.gpu, nil
}

// SetGPUData makes p, an allocation of at least DeviceSize bytes on this
// memory's device holding elements of the memory's storage, the device
// copy. The memory does not take ownership: Close never frees p.
func (m *SyncedMemory) SetGPUData(p cuda.DevicePtr) error {
	d, err := m.device("SetGPUData")
	if err != nil {
		return err
	}
	if err := m.releaseGPU(); err != nil {
		return err
	}
	m.gpu, m.hasGPU, m.ownGPU, m.gpuDev = p, true, false, d
	m.head = HeadAtGPU
	m.writes++
	m.gpuBytes = 0
	return nil
}

// SetSharedGPUData is SetGPUData for device memory of n bytes that another
// SyncedMemory owns. n counts device bytes (in the memory's storage) and
// may be less than DeviceSize (a blob that grew, sharing a batch whose
// blob did not): copies between host and device then move n device bytes,
// all the shared memory holds, and the elements they hold.
func (m *SyncedMemory) SetSharedGPUData(p cuda.DevicePtr, n int) error {
	if err := m.SetGPUData(p); err != nil {
		return err
	}
	if n < m.DeviceSize() {
		m.gpuBytes = n
	}
	return nil
}

// deviceBytes is how many bytes the device memory holds: gpuBytes (a
// device byte count) when positive, else DeviceSize.
func (m *SyncedMemory) deviceBytes() int {
	if m.gpuBytes > 0 {
		return m.gpuBytes
	}
	return m.DeviceSize()
}

// DeviceBuffer returns the address of the device copy and true, or false
// when there is none yet. It changes nothing: a recorded CUDA graph holds
// the addresses it was recorded with, and its owner compares them.
func (m *SyncedMemory) DeviceBuffer() (cuda.DevicePtr, bool) { return m.gpu, m.hasGPU }

// BorrowsDevice reports whether the device copy is memory this one does
// not own (SetGPUData, SetSharedGPUData): a Data layer's top reading its
// prefetched batch in place, whose address changes from batch to batch.
func (m *SyncedMemory) BorrowsDevice() bool { return m.hasGPU && !m.ownGPU }

// MarkDeviceWritten records that work queued on the device outside the
// accessors (a replayed CUDA graph) may have written the device copy: a
// SYNCED head moves to HEAD_AT_GPU, so that the next host read copies
// back. HEAD_AT_GPU stays; without a device copy, or with the head at the
// host (whose copy the device has not seen), it is an error.
func (m *SyncedMemory) MarkDeviceWritten() error {
	switch m.head {
	case HeadAtGPU:
		m.writes++
		return nil
	case Synced:
		m.head = HeadAtGPU
		m.writes++
		return nil
	}
	return fmt.Errorf("syncedmem: MarkDeviceWritten with the head at %v", m.head)
}

// AsyncGPUPush starts copying the host copy to the device on stream s and
// marks the memory Synced. The caller must synchronise s before the device
// copy is read. The head must be HeadAtCPU.
//
// With a reduced storage the elements are narrowed into a temporary host
// buffer, which is not pinned, and copied synchronously: the copy is done
// when AsyncGPUPush returns.
func (m *SyncedMemory) AsyncGPUPush(s *cuda.Stream) error {
	if m.head != HeadAtCPU {
		return fmt.Errorf("syncedmem: AsyncGPUPush needs the head at HEAD_AT_CPU, it is %v", m.head)
	}
	if err := m.allocGPU(); err != nil {
		return err
	}
	if m.storage.Reduced() {
		if err := m.copyToDevice(); err != nil {
			return err
		}
		m.head = Synced
		return nil
	}
	if err := m.gpuDev.CopyHtoDAsync(m.gpu, m.cpu[:m.deviceBytes()], s); err != nil {
		return fmt.Errorf("syncedmem: async push of %d bytes: %w", m.size, err)
	}
	m.head = Synced
	return nil
}

// Close releases the buffers this memory allocated (adopted buffers are left
// alone) and returns it to Uninitialized. Device memory is not managed by
// the garbage collector, so a memory that ever held a device copy should be
// closed when it is no longer needed. The storage is a setting and stays.
func (m *SyncedMemory) Close() error {
	errCPU := m.releaseCPU()
	errGPU := m.releaseGPU()
	m.head = Uninitialized
	if errCPU != nil {
		return errCPU
	}
	return errGPU
}

// toCPU brings the host copy up to date (Caffe's to_cpu).
func (m *SyncedMemory) toCPU() {
	switch m.head {
	case Uninitialized:
		m.allocCPU()
		m.head = HeadAtCPU
	case HeadAtGPU:
		if err := m.copyToHost(); err != nil {
			panic(err)
		}
		m.head = Synced
	}
}

// copyToHost copies the device copy over the host copy, allocating the
// host copy if there is none, and widening 16-bit elements of a reduced
// storage (deviceBytes/2 of them; the host elements beyond stay as they
// are). Its error is a *DeviceError.
func (m *SyncedMemory) copyToHost() error {
	if m.cpu == nil {
		m.allocCPU()
	}
	n := m.deviceBytes()
	if !m.storage.Reduced() {
		if err := m.gpuDev.CopyDtoH(m.cpu[:n], m.gpu); err != nil {
			return &DeviceError{Op: fmt.Sprintf("copy %d bytes device to host", n), Err: err}
		}
		return nil
	}
	half := make([]uint16, n/2)
	if err := m.gpuDev.CopyDtoH(uint16Bytes(half), m.gpu); err != nil {
		return &DeviceError{Op: fmt.Sprintf("copy %d %v bytes device to host", 2*len(half), m.storage), Err: err}
	}
	m.cl.toRowMajor(half)
	Widen(float32s(m.cpu, len(half)), half, m.storage)
	return nil
}

// copyToDevice copies the host copy over the device copy, narrowing the
// elements for a reduced storage.
func (m *SyncedMemory) copyToDevice() error {
	n := m.deviceBytes()
	if !m.storage.Reduced() {
		if err := m.gpuDev.CopyHtoD(m.gpu, m.cpu[:n]); err != nil {
			return fmt.Errorf("syncedmem: copy %d bytes host to device: %w", n, err)
		}
		return nil
	}
	half := make([]uint16, n/2)
	Narrow(half, float32s(m.cpu, len(half)), m.storage)
	m.cl.toChannelsLast(half)
	if err := m.gpuDev.CopyHtoD(m.gpu, uint16Bytes(half)); err != nil {
		return fmt.Errorf("syncedmem: copy %d %v bytes host to device: %w", 2*len(half), m.storage, err)
	}
	return nil
}

// toGPU brings the device copy up to date (Caffe's to_gpu).
func (m *SyncedMemory) toGPU() error {
	switch m.head {
	case Uninitialized:
		if err := m.allocGPU(); err != nil {
			return err
		}
		// Zero bits are +0 in every storage.
		if err := m.gpuDev.Memset(m.gpu, 0, m.deviceBytes()); err != nil {
			return fmt.Errorf("syncedmem: zero %d bytes on the device: %w", m.deviceBytes(), err)
		}
		m.head = HeadAtGPU
	case HeadAtCPU:
		if err := m.allocGPU(); err != nil {
			return err
		}
		if err := m.copyToDevice(); err != nil {
			return err
		}
		m.head = Synced
	}
	return nil
}

// allocCPU allocates a zeroed host buffer: pinned when the memory belongs to
// a device, from the Go heap otherwise (or when pinning fails, which only
// costs speed).
func (m *SyncedMemory) allocCPU() {
	if m.dev != nil {
		if buf, err := m.dev.HostAlloc(m.size); err == nil {
			clear(buf)
			m.cpu, m.ownCPU, m.pinDev = buf, true, m.dev
			m.cpuCleanup = runtime.AddCleanup(m, freePinned, pinnedBuffer{m.dev, buf})
			return
		}
	}
	m.cpu, m.ownCPU, m.pinDev = alignedBytes(m.size), true, nil
}

// allocGPU allocates the device buffer, of DeviceSize bytes, if there is
// none yet.
func (m *SyncedMemory) allocGPU() error {
	if m.hasGPU {
		return nil
	}
	d, err := m.device("allocate device memory")
	if err != nil {
		return err
	}
	p, err := d.Alloc(m.DeviceSize())
	if err != nil {
		return fmt.Errorf("syncedmem: allocate %d bytes on the device: %w", m.DeviceSize(), err)
	}
	m.gpu, m.hasGPU, m.ownGPU, m.gpuDev = p, true, true, d
	m.gpuBytes = 0
	m.gpuCleanup = runtime.AddCleanup(m, freeDevice, deviceBuffer{d, p})
	return nil
}

// device returns the device to use for a device buffer.
func (m *SyncedMemory) device(op string) (*cuda.Device, error) {
	if m.gpuDev != nil {
		return m.gpuDev, nil
	}
	if m.dev != nil {
		return m.dev, nil
	}
	d, err := cuda.DefaultDevice()
	if err != nil {
		return nil, fmt.Errorf("syncedmem: %s: %w", op, err)
	}
	return d, nil
}

func (m *SyncedMemory) releaseCPU() error {
	var err error
	if m.pinDev != nil && m.ownCPU {
		m.cpuCleanup.Stop()
		err = m.pinDev.HostFree(m.cpu)
	}
	m.cpu, m.ownCPU, m.pinDev = nil, false, nil
	return err
}

func (m *SyncedMemory) releaseGPU() error {
	var err error
	if m.hasGPU && m.ownGPU {
		m.gpuCleanup.Stop()
		err = m.gpuDev.Free(m.gpu)
	}
	m.gpu, m.hasGPU, m.ownGPU, m.gpuDev = 0, false, false, nil
	m.gpuBytes = 0
	return err
}

// deviceBuffer and pinnedBuffer are what the cleanups free; they must not
// refer to the SyncedMemory itself, or it would never be collected.
type deviceBuffer struct {
	dev *cuda.Device
	p   cuda.DevicePtr
}

type pinnedBuffer struct {
	dev *cuda.Device
	buf []byte
}

func freeDevice(b deviceBuffer) { b.dev.Free(b.p) }
func freePinned(b pinnedBuffer) { b.dev.HostFree(b.buf) }

// hostAlign is the alignment of host memory: a cache line, and more than
// any SIMD load needs. It also makes results reproducible: gonum's vector
// kernels (the dot products of Sgemv) add a buffer's first elements one by
// one until it is 16-byte aligned, so the same sums over memory that the
// allocator happened to place at another 8-byte offset round differently
// (one ulp in the gradients of Bias, Scale and BatchNorm, from run to
// run). Every blob's memory starting on a 64-byte boundary makes the
// order of every sum a function of the shapes alone.
const hostAlign = 64

// alignedBytes returns n zeroed bytes aligned to hostAlign, whatever n is.
func alignedBytes(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+hostAlign-1)/8+1)
	off := 0
	if r := int(uintptr(unsafe.Pointer(&words[0])) % hostAlign); r != 0 {
		off = hostAlign - r
	}
	// The slice points into words, which it keeps alive.
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(&words[0]), off)), n)
}
