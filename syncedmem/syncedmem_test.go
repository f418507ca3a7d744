package syncedmem

import (
	"bytes"
	"testing"
	"unsafe"
)

func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}

func allEqual(b []byte, v byte) bool {
	return bytes.Count(b, []byte{v}) == len(b)
}

func TestInitialization(t *testing.T) {
	m := New(10)
	if m.Head() != Uninitialized {
		t.Errorf("new memory: head %v, want UNINITIALIZED", m.Head())
	}
	if m.Size() != 10 {
		t.Errorf("size %d, want 10", m.Size())
	}
	if New(0).Size() != 0 {
		t.Errorf("New(0).Size() = %d", New(0).Size())
	}
}

func TestAllocationCPU(t *testing.T) {
	m := New(10)
	if got := m.CPUData(); len(got) != 10 {
		t.Fatalf("CPUData has %d bytes, want 10", len(got))
	}
	if m.Head() != HeadAtCPU {
		t.Errorf("after CPUData: head %v, want HEAD_AT_CPU", m.Head())
	}
	if got := m.MutableCPUData(); len(got) != 10 {
		t.Fatalf("MutableCPUData has %d bytes, want 10", len(got))
	}
}

func TestZeroFillOnFirstAllocation(t *testing.T) {
	for _, n := range []int{1, 3, 8, 17, 4096} {
		m := New(n)
		if !allEqual(m.CPUData(), 0) {
			t.Errorf("size %d: first CPUData not zero filled", n)
		}
	}
}

func TestCPUWrite(t *testing.T) {
	m := New(10)
	data := m.MutableCPUData()
	if m.Head() != HeadAtCPU {
		t.Fatalf("after MutableCPUData: head %v, want HEAD_AT_CPU", m.Head())
	}
	fill(data, 1)
	if !allEqual(m.CPUData(), 1) {
		t.Errorf("values written through MutableCPUData not read back: %v", m.CPUData())
	}
	// Do another round.
	data = m.MutableCPUData()
	if m.Head() != HeadAtCPU {
		t.Fatalf("head %v, want HEAD_AT_CPU", m.Head())
	}
	fill(data, 2)
	if !allEqual(m.CPUData(), 2) {
		t.Errorf("second write not read back: %v", m.CPUData())
	}
}

func TestCPUDataKeepsTheSameBuffer(t *testing.T) {
	m := New(16)
	a := m.MutableCPUData()
	b := m.CPUData()
	if &a[0] != &b[0] {
		t.Error("CPUData and MutableCPUData returned different buffers")
	}
}

func TestHostMemoryAlignedForFloat64(t *testing.T) {
	for _, n := range []int{1, 4, 5, 12, 24, 1000} {
		p := uintptr(unsafe.Pointer(&New(n).CPUData()[0]))
		if p%8 != 0 {
			t.Errorf("size %d: host buffer at %#x is not 8-byte aligned", n, p)
		}
	}
}

func TestSetCPUDataAdoptsWithoutOwning(t *testing.T) {
	m := New(8)
	fill(m.MutableCPUData(), 7)
	buf := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}
	if err := m.SetCPUData(buf); err != nil {
		t.Fatal(err)
	}
	if m.Head() != HeadAtCPU {
		t.Errorf("after SetCPUData: head %v, want HEAD_AT_CPU", m.Head())
	}
	got := m.MutableCPUData()
	if !bytes.Equal(got, buf[:8]) || &got[0] != &buf[0] {
		t.Fatalf("SetCPUData: memory does not use the given buffer: %v", got)
	}
	got[0] = 42
	if buf[0] != 42 {
		t.Error("writes through the memory do not reach the adopted buffer")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf, []byte{42, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("Close touched the adopted buffer: %v", buf)
	}
	if m.Head() != Uninitialized {
		t.Errorf("after Close: head %v, want UNINITIALIZED", m.Head())
	}
	if !allEqual(m.CPUData(), 0) {
		t.Error("memory reused after Close is not freshly zeroed")
	}
}

func TestSetCPUDataTooSmall(t *testing.T) {
	m := New(8)
	if err := m.SetCPUData(make([]byte, 7)); err == nil {
		t.Fatal("SetCPUData accepted a 7-byte buffer for an 8-byte memory")
	}
	if m.Head() != Uninitialized {
		t.Errorf("failed SetCPUData changed the head to %v", m.Head())
	}
}

func TestNegativeSizePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(-1) did not panic")
		}
	}()
	New(-1)
}

func TestHeadString(t *testing.T) {
	want := map[Head]string{Uninitialized: "UNINITIALIZED", HeadAtCPU: "HEAD_AT_CPU", HeadAtGPU: "HEAD_AT_GPU", Synced: "SYNCED"}
	for h, s := range want {
		if h.String() != s {
			t.Errorf("%d.String() = %q, want %q", int(h), h.String(), s)
		}
	}
}

// Host memory starts on a 64-byte boundary whatever its size, so that the
// order in which vector kernels add its elements (gonum's dot products
// align themselves one element at a time) depends on the shapes alone and
// a pass is bit-for-bit the same from run to run.
func TestHostMemoryAligned(t *testing.T) {
	var keep []*SyncedMemory // allocated together, so that small sizes share spans
	for size := 1; size <= 300; size++ {
		m := New(size)
		keep = append(keep, m)
		b := m.MutableCPUData()
		if len(b) != size {
			t.Fatalf("New(%d): %d bytes", size, len(b))
		}
		if p := uintptr(unsafe.Pointer(&b[0])); p%hostAlign != 0 {
			t.Fatalf("New(%d): host memory at %#x, not %d-byte aligned", size, p, hostAlign)
		}
		if !allEqual(b, 0) {
			t.Fatalf("New(%d): host memory not zeroed", size)
		}
	}
	_ = keep
}
