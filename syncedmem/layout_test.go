package syncedmem

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/gocaffe/gocaffe/internal/cudatest"
)

// rowMajorOf returns the row-major index of channels-last index j of n
// images, c channels and s positions.
func rowMajorOf(j, c, s int) int {
	ch, t := j%c, j/c
	return (t/s*c+ch)*s + t%s
}

func TestChannelsLastOrder(t *testing.T) {
	l := channelsLast{n: 2, c: 3, s: 4}
	v := make([]uint16, 26) // two values past the blob stay
	for i := range v {
		v[i] = uint16(i)
	}
	l.toChannelsLast(v)
	for j := range 24 {
		if want := uint16(rowMajorOf(j, 3, 4)); v[j] != want {
			t.Fatalf("channels-last [%d] = %d, want row-major element %d", j, v[j], want)
		}
	}
	if v[24] != 24 || v[25] != 25 {
		t.Errorf("values past n*c*s moved: %v", v[24:])
	}
	l.toRowMajor(v)
	for i := range v {
		if v[i] != uint16(i) {
			t.Fatalf("round trip: [%d] = %d", i, v[i])
		}
	}
}

func TestSetChannelsLastRefuses(t *testing.T) {
	m := New(4 * 24)
	if err := m.SetChannelsLast(2, 3, 4); err == nil || !strings.Contains(err.Error(), "row-major only") {
		t.Errorf("native storage: %v, want an error", err)
	}
	if err := m.SetStorage(StorageBFloat16); err != nil {
		t.Fatal(err)
	}
	for _, d := range [][3]int{{2, 3, 5}, {0, 3, 4}, {-1, 3, 4}} {
		if err := m.SetChannelsLast(d[0], d[1], d[2]); err == nil {
			t.Errorf("SetChannelsLast%v: no error", d)
		}
	}
	if err := m.SetChannelsLast(2, 3, 4); err != nil {
		t.Fatal(err)
	}
	if err := m.SetStorage(StorageNative); err != nil {
		t.Fatal(err)
	}
	if n, c, s := m.ChannelsLast(); n != 0 || c != 0 || s != 0 {
		t.Errorf("after SetStorage(native): channels-last %d, %d, %d; want row-major", n, c, s)
	}
}

// The device copy of a channels-last memory holds the host's values
// reordered, in bfloat16, and a copy back restores the host's order.
func TestChannelsLastOnDevice(t *testing.T) {
	d := cudatest.Device(t)
	m := New(4 * 24)
	defer m.Close()
	m.SetDevice(d)
	if err := m.SetStorage(StorageBFloat16); err != nil {
		t.Fatal(err)
	}
	if err := m.SetChannelsLast(2, 3, 4); err != nil {
		t.Fatal(err)
	}
	host := unsafe.Slice((*float32)(unsafe.Pointer(&m.MutableCPUData()[0])), 24)
	for i := range host {
		host[i] = float32(i)
	}
	p, err := m.GPUData()
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 48)
	if err := d.CopyDtoH(raw, p); err != nil {
		t.Fatal(err)
	}
	for j := range 24 {
		bits := uint16(raw[2*j]) | uint16(raw[2*j+1])<<8
		var got [1]float32
		Widen(got[:], []uint16{bits}, StorageBFloat16)
		if want := float32(rowMajorOf(j, 3, 4)); got[0] != want {
			t.Fatalf("device [%d] = %g, want %g", j, got[0], want)
		}
	}
	if _, err := m.MutableGPUData(); err != nil { // the head at the device: the host copy is stale
		t.Fatal(err)
	}
	back := unsafe.Slice((*float32)(unsafe.Pointer(&m.CPUData()[0])), 24)
	for i := range back {
		if back[i] != float32(i) {
			t.Fatalf("host [%d] = %g after the copy back, want %d", i, back[i], i)
		}
	}
}
