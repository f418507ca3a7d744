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
	// gpuBytes, when positive, is the size of shared device memory smaller
	// than size (SetSharedGPUData); copies move no more than it.
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

// Size returns the size in bytes.
func (m *SyncedMemory) Size() int { return m.size }

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

// SetGPUData makes p, an allocation of at least Size bytes on this memory's
// device, the device copy. The memory does not take ownership: Close never
// frees p.
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
// SyncedMemory owns. n may be less than this memory's size (a blob that
// grew, sharing a batch whose blob did not): copies between host and
// device then move n bytes, all the shared memory holds.
func (m *SyncedMemory) SetSharedGPUData(p cuda.DevicePtr, n int) error {
	if err := m.SetGPUData(p); err != nil {
		return err
	}
	if n < m.size {
		m.gpuBytes = n
	}
	return nil
}

// deviceBytes is how many bytes the device memory holds.
func (m *SyncedMemory) deviceBytes() int {
	if m.gpuBytes > 0 {
		return m.gpuBytes
	}
	return m.size
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
func (m *SyncedMemory) AsyncGPUPush(s *cuda.Stream) error {
	if m.head != HeadAtCPU {
		return fmt.Errorf("syncedmem: AsyncGPUPush needs the head at HEAD_AT_CPU, it is %v", m.head)
	}
	if err := m.allocGPU(); err != nil {
		return err
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
// closed when it is no longer needed.
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
		if m.cpu == nil {
			m.allocCPU()
		}
		if err := m.gpuDev.CopyDtoH(m.cpu[:m.deviceBytes()], m.gpu); err != nil {
			panic(&DeviceError{Op: fmt.Sprintf("copy %d bytes device to host", m.deviceBytes()), Err: err})
		}
		m.head = Synced
	}
}

// toGPU brings the device copy up to date (Caffe's to_gpu).
func (m *SyncedMemory) toGPU() error {
	switch m.head {
	case Uninitialized:
		if err := m.allocGPU(); err != nil {
			return err
		}
		if err := m.gpuDev.Memset(m.gpu, 0, m.deviceBytes()); err != nil {
			return fmt.Errorf("syncedmem: zero %d bytes on the device: %w", m.size, err)
		}
		m.head = HeadAtGPU
	case HeadAtCPU:
		if err := m.allocGPU(); err != nil {
			return err
		}
		if err := m.gpuDev.CopyHtoD(m.gpu, m.cpu[:m.deviceBytes()]); err != nil {
			return fmt.Errorf("syncedmem: copy %d bytes host to device: %w", m.size, err)
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

// allocGPU allocates the device buffer if there is none yet.
func (m *SyncedMemory) allocGPU() error {
	if m.hasGPU {
		return nil
	}
	d, err := m.device("allocate device memory")
	if err != nil {
		return err
	}
	p, err := d.Alloc(m.size)
	if err != nil {
		return fmt.Errorf("syncedmem: allocate %d bytes on the device: %w", m.size, err)
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
