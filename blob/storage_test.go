package blob

import (
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/syncedmem"
)

func TestSetStorageNeedsFloat32(t *testing.T) {
	b := mustNew[float64](t, 2, 3)
	for _, s := range []syncedmem.Storage{syncedmem.StorageFloat16, syncedmem.StorageBFloat16} {
		err := b.SetStorage(s)
		if err == nil || !strings.Contains(err.Error(), s.String()+" storage needs float32 elements") {
			t.Errorf("SetStorage(%v) of a float64 blob: err = %v", s, err)
		}
	}
	if b.Storage() != syncedmem.StorageNative || b.Data().Storage() != syncedmem.StorageNative || b.Diff().Storage() != syncedmem.StorageNative {
		t.Error("a refused SetStorage changed the storage")
	}
	if err := b.SetStorage(syncedmem.StorageNative); err != nil {
		t.Errorf("SetStorage(native) of a float64 blob: %v", err)
	}
}

func TestStorageSurvivesReshape(t *testing.T) {
	b := mustNew[float32](t, 2, 3)
	if err := b.SetStorage(syncedmem.StorageBFloat16); err != nil {
		t.Fatal(err)
	}
	if b.Data().Storage() != syncedmem.StorageBFloat16 || b.Diff().Storage() != syncedmem.StorageBFloat16 {
		t.Fatalf("SetStorage: data %v, diff %v", b.Data().Storage(), b.Diff().Storage())
	}
	old := b.Data()
	if err := b.Reshape([]int{4, 5}); err != nil {
		t.Fatal(err)
	}
	if b.Data() == old {
		t.Fatal("a Reshape that grows kept the memory")
	}
	if b.Storage() != syncedmem.StorageBFloat16 || b.Data().Storage() != syncedmem.StorageBFloat16 || b.Diff().Storage() != syncedmem.StorageBFloat16 {
		t.Errorf("after a growing Reshape: blob %v, data %v, diff %v; want BFLOAT16", b.Storage(), b.Data().Storage(), b.Diff().Storage())
	}
	if b.Data().DeviceSize() != 20*2 {
		t.Errorf("device size %d, want 40", b.Data().DeviceSize())
	}
	// SetCPUData of another size replaces the memory too.
	if err := b.SetCPUData(make([]float32, 30)); err != nil {
		t.Fatal(err)
	}
	if b.Storage() != syncedmem.StorageBFloat16 {
		t.Errorf("memory fitted by SetCPUData: storage %v", b.Storage())
	}
	// A blob without a shape remembers the storage for its first Reshape.
	e := mustNew[float32](t)
	if err := e.SetStorage(syncedmem.StorageFloat16); err != nil {
		t.Fatal(err)
	}
	if err := e.Reshape([]int{3}); err != nil {
		t.Fatal(err)
	}
	if e.Data().Storage() != syncedmem.StorageFloat16 || e.Diff().Storage() != syncedmem.StorageFloat16 {
		t.Errorf("first Reshape after SetStorage: data %v, diff %v", e.Data().Storage(), e.Diff().Storage())
	}
	// The host copy holds float32 exactly, whatever the device stores.
	e.MutableCPUData()[0] = 0.1
	if e.CPUData()[0] != 0.1 || e.AsumData() != 0.1 {
		t.Errorf("host values of a FLOAT16 blob rounded: %v, asum %v", e.CPUData()[0], e.AsumData())
	}
}

func TestPlaceRefusesOtherStorage(t *testing.T) {
	b := mustNew[float32](t, 2, 3)
	if err := b.SetStorage(syncedmem.StorageFloat16); err != nil {
		t.Fatal(err)
	}
	own := b.Data()
	slot := syncedmem.New(10 * 4)
	for _, place := range []func(*syncedmem.SyncedMemory) error{b.PlaceData, b.PlaceDiff} {
		err := place(slot)
		if err == nil || !strings.Contains(err.Error(), "native") || !strings.Contains(err.Error(), "FLOAT16") {
			t.Errorf("placing a FLOAT16 blob in native memory: err = %v, want one naming both storages", err)
		}
	}
	if b.Data() != own {
		t.Error("a refused PlaceData changed the data memory")
	}
	if err := slot.SetStorage(syncedmem.StorageFloat16); err != nil {
		t.Fatal(err)
	}
	if err := b.PlaceData(slot); err != nil {
		t.Errorf("placing in memory of the same storage: %v", err)
	}
}

// ShareData takes the other blob's memory and its storage, which later
// memories follow; SetStorage on a blob sets the memory it shares.
func TestShareDataStorage(t *testing.T) {
	a := mustNew[float32](t, 2)
	other := mustNew[float32](t, 2)
	if err := other.SetStorage(syncedmem.StorageBFloat16); err != nil {
		t.Fatal(err)
	}
	if err := a.ShareData(other); err != nil {
		t.Fatal(err)
	}
	if a.Storage() != syncedmem.StorageBFloat16 {
		t.Errorf("after ShareData of a BFLOAT16 blob: storage %v", a.Storage())
	}
	if err := a.Reshape([]int{5}); err != nil {
		t.Fatal(err)
	}
	if a.Data().Storage() != syncedmem.StorageBFloat16 || a.Diff().Storage() != syncedmem.StorageBFloat16 {
		t.Errorf("memory after ShareData and a growing Reshape: data %v, diff %v", a.Data().Storage(), a.Diff().Storage())
	}

	top := mustNew[float32](t, 3)
	bottom := mustNew[float32](t, 3)
	if err := top.ShareData(bottom); err != nil {
		t.Fatal(err)
	}
	if err := top.SetStorage(syncedmem.StorageFloat16); err != nil {
		t.Fatal(err)
	}
	if bottom.Data().Storage() != syncedmem.StorageFloat16 || bottom.Storage() != syncedmem.StorageFloat16 {
		t.Errorf("in-place blobs: the shared memory's storage is %v", bottom.Data().Storage())
	}
}

// Blobs of different storages neither swap nor borrow each other's memory.
func TestSwapAndBorrowAcrossStorages(t *testing.T) {
	a := mustNew[float32](t, 4)
	b := mustNew[float32](t, 4)
	if err := b.SetStorage(syncedmem.StorageBFloat16); err != nil {
		t.Fatal(err)
	}
	if a.SwapData(b) || a.SwapDiff(b) {
		t.Error("swapped memory of native and BFLOAT16 blobs")
	}
	if err := a.BorrowData(b); err == nil || !strings.Contains(err.Error(), "BFLOAT16") {
		t.Errorf("borrowing BFLOAT16 memory for a native blob: err = %v", err)
	}
	if err := a.SetStorage(syncedmem.StorageBFloat16); err != nil {
		t.Fatal(err)
	}
	if !a.SwapData(b) {
		t.Error("blobs of one storage did not swap")
	}
}

// CopyFrom between storages copies the host values exactly.
func TestCopyFromAcrossStorages(t *testing.T) {
	src := mustNew[float32](t, 3)
	copy(src.MutableCPUData(), []float32{0.1, -2.5, 70000})
	dst := mustNew[float32](t, 3)
	if err := dst.SetStorage(syncedmem.StorageFloat16); err != nil {
		t.Fatal(err)
	}
	if err := dst.CopyFrom(src, false, false); err != nil {
		t.Fatal(err)
	}
	if got := dst.CPUData(); got[0] != 0.1 || got[1] != -2.5 || got[2] != 70000 {
		t.Errorf("copied %v", got)
	}
}
