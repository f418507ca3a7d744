package blob

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// forBothTypes runs a test for float32 and float64, as Caffe's typed tests do.
func forBothTypes(t *testing.T, f32 func(*testing.T), f64 func(*testing.T)) {
	t.Run("float32", f32)
	t.Run("float64", f64)
}

func mustNew[T Float](t *testing.T, shape ...int) *Blob[T] {
	t.Helper()
	b, err := New[T](shape...)
	if err != nil {
		t.Fatalf("New(%v): %v", shape, err)
	}
	return b
}

func TestInitialization(t *testing.T) {
	forBothTypes(t, testInitialization[float32], testInitialization[float64])
}

func testInitialization[T Float](t *testing.T) {
	b := mustNew[T](t, 2, 3, 4, 5)
	if b.Num() != 2 || b.Channels() != 3 || b.Height() != 4 || b.Width() != 5 {
		t.Errorf("legacy shape %d %d %d %d, want 2 3 4 5", b.Num(), b.Channels(), b.Height(), b.Width())
	}
	if b.Count() != 120 || b.NumAxes() != 4 {
		t.Errorf("count %d axes %d, want 120 and 4", b.Count(), b.NumAxes())
	}
	empty := mustNew[T](t)
	if empty.NumAxes() != 0 || empty.Count() != 0 {
		t.Errorf("empty blob: axes %d count %d, want 0 and 0", empty.NumAxes(), empty.Count())
	}
	if len(b.CPUData()) != 120 || len(b.CPUDiff()) != 120 || len(b.MutableCPUData()) != 120 || len(b.MutableCPUDiff()) != 120 {
		t.Error("host accessors do not return Count elements")
	}
	if b.Data().Size() != 120*elemSize[T]() {
		t.Errorf("data memory is %d bytes, want %d", b.Data().Size(), 120*elemSize[T]())
	}
}

func TestReshape(t *testing.T) { forBothTypes(t, testReshape[float32], testReshape[float64]) }

func testReshape[T Float](t *testing.T) {
	b := mustNew[T](t)
	if err := b.Reshape4(2, 3, 4, 5); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(b.Shape(), []int{2, 3, 4, 5}) || b.Count() != 120 {
		t.Errorf("Reshape4: shape %v count %d", b.Shape(), b.Count())
	}
	if err := b.Reshape([]int{0, 5}); err != nil || b.Count() != 0 {
		t.Errorf("Reshape to a zero dimension: err %v count %d", err, b.Count())
	}
	if err := b.Reshape([]int{}); err != nil || b.Count() != 1 || b.NumAxes() != 0 {
		t.Errorf("Reshape to a scalar: err %v count %d axes %d", err, b.Count(), b.NumAxes())
	}
	other := mustNew[T](t, 7, 1, 3)
	if err := b.ReshapeLike(other); err != nil || !b.SameShape(other) {
		t.Errorf("ReshapeLike: err %v shape %v", err, b.Shape())
	}
}

func TestReshapeErrors(t *testing.T) {
	forBothTypes(t, testReshapeErrors[float32], testReshapeErrors[float64])
}

func testReshapeErrors[T Float](t *testing.T) {
	b := mustNew[T](t, 2, 3)
	cases := []struct {
		shape []int
		want  string
	}{
		{[]int{2, -1, 3}, "negative dimension -1 at axis 1"},
		{make([]int, MaxAxes+1), "at most 32"},
		{[]int{65536, 65536}, "exceeds INT_MAX"},
		{[]int{math.MaxInt32, 2}, "exceeds INT_MAX"},
	}
	for _, c := range cases {
		err := b.Reshape(c.shape)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Reshape(%v): err = %v, want one containing %q", c.shape, err, c.want)
		}
	}
	if !slices.Equal(b.Shape(), []int{2, 3}) {
		t.Errorf("failed Reshape changed the shape to %v", b.Shape())
	}
	if _, err := New[T](4, -2); err == nil {
		t.Error("New with a negative dimension succeeded")
	}
	if err := b.Reshape(make([]int, MaxAxes)); err != nil {
		t.Errorf("Reshape to 32 axes: %v", err)
	}
}

func TestCapacity(t *testing.T) { forBothTypes(t, testCapacity[float32], testCapacity[float64]) }

// Shrinking keeps the allocation and its contents; growing replaces it with
// fresh zeroed memory.
func testCapacity[T Float](t *testing.T) {
	b := mustNew[T](t, 4, 5)
	data := b.MutableCPUData()
	for i := range data {
		data[i] = T(i + 1)
	}
	mem := b.Data()
	if err := b.Reshape([]int{2, 3}); err != nil {
		t.Fatal(err)
	}
	if b.Data() != mem || b.Capacity() != 20 {
		t.Fatal("shrinking replaced the memory")
	}
	if got := b.CPUData(); !slices.Equal(got, []T{1, 2, 3, 4, 5, 6}) {
		t.Errorf("contents after shrinking: %v", got)
	}
	if err := b.Reshape([]int{4, 5}); err != nil || b.Data() != mem {
		t.Fatalf("growing back within capacity replaced the memory (err %v)", err)
	}
	if err := b.Reshape([]int{3, 7}); err != nil {
		t.Fatal(err)
	}
	if b.Data() == mem || b.Capacity() != 21 {
		t.Fatal("growing past the capacity kept the memory")
	}
	if b.Data().Head() != syncedmem.Uninitialized || mathfn.Asum(21, b.CPUData()) != 0 {
		t.Error("memory after growing is not fresh and zeroed")
	}
}

func TestAxes(t *testing.T) { forBothTypes(t, testAxes[float32], testAxes[float64]) }

func testAxes[T Float](t *testing.T) {
	b := mustNew[T](t, 2, 3, 4, 5)
	for axis, want := range map[int]int{0: 0, 3: 3, -1: 3, -4: 0, -2: 2} {
		if got, err := b.CanonicalAxisIndex(axis); err != nil || got != want {
			t.Errorf("CanonicalAxisIndex(%d) = %d, %v; want %d", axis, got, err, want)
		}
	}
	for _, axis := range []int{4, -5, 100} {
		_, err := b.CanonicalAxisIndex(axis)
		if err == nil || !strings.Contains(err.Error(), "2 3 4 5 (120)") {
			t.Errorf("CanonicalAxisIndex(%d): err = %v, want one naming the shape", axis, err)
		}
		if _, err := b.ShapeAt(axis); err == nil {
			t.Errorf("ShapeAt(%d) succeeded", axis)
		}
	}
	if d, err := b.ShapeAt(-1); err != nil || d != 5 {
		t.Errorf("ShapeAt(-1) = %d, %v", d, err)
	}
	if b.CountRange(1, 3) != 12 || b.CountRange(2, 2) != 1 || b.CountFrom(1) != 60 || b.CountFrom(4) != 1 {
		t.Errorf("CountRange/CountFrom wrong: %d %d %d %d", b.CountRange(1, 3), b.CountRange(2, 2), b.CountFrom(1), b.CountFrom(4))
	}
	if b.ShapeString() != "2 3 4 5 (120)" {
		t.Errorf("ShapeString = %q", b.ShapeString())
	}
	assertPanics(t, "CountRange(3, 1)", func() { b.CountRange(3, 1) })
	assertPanics(t, "CountRange(0, 5)", func() { b.CountRange(0, 5) })
}

func TestLegacyShape(t *testing.T) {
	forBothTypes(t, testLegacyShape[float32], testLegacyShape[float64])
}

func testLegacyShape[T Float](t *testing.T) {
	b := mustNew[T](t, 6, 7)
	if b.Num() != 6 || b.Channels() != 7 || b.Height() != 1 || b.Width() != 1 {
		t.Errorf("2-D blob legacy shape %d %d %d %d, want 6 7 1 1", b.Num(), b.Channels(), b.Height(), b.Width())
	}
	five := mustNew[T](t, 1, 2, 3, 4, 5)
	if _, err := five.LegacyShape(0); err == nil || !strings.Contains(err.Error(), "5 > 4 axes") {
		t.Errorf("LegacyShape on a 5-D blob: err = %v", err)
	}
	assertPanics(t, "Num of a 5-D blob", func() { five.Num() })
}

func TestOffset(t *testing.T) { forBothTypes(t, testOffset[float32], testOffset[float64]) }

func testOffset[T Float](t *testing.T) {
	b := mustNew[T](t, 2, 3, 4, 5)
	if got := b.Offset(1, 2, 3, 4); got != 119 {
		t.Errorf("Offset(1,2,3,4) = %d, want 119", got)
	}
	if got := b.Offset(1, 0, 0, 0); got != 60 {
		t.Errorf("Offset(1,0,0,0) = %d, want 60", got)
	}
	// Caffe allows one past the end on each axis.
	if got := b.Offset(2, 0, 0, 0); got != 120 {
		t.Errorf("Offset(2,0,0,0) = %d, want 120", got)
	}
	if got := b.OffsetIndices([]int{1, 2, 3, 4}); got != 119 {
		t.Errorf("OffsetIndices(1,2,3,4) = %d", got)
	}
	if got := b.OffsetIndices([]int{1, 1}); got != 80 {
		t.Errorf("OffsetIndices(1,1) = %d, want 80", got)
	}
	assertPanics(t, "Offset(3,0,0,0)", func() { b.Offset(3, 0, 0, 0) })
	assertPanics(t, "OffsetIndices(2)", func() { b.OffsetIndices([]int{2}) })
	assertPanics(t, "OffsetIndices with 5 indices", func() { b.OffsetIndices([]int{0, 0, 0, 0, 0}) })
}

func TestCopyFrom(t *testing.T) { forBothTypes(t, testCopyFrom[float32], testCopyFrom[float64]) }

func testCopyFrom[T Float](t *testing.T) {
	src := mustNew[T](t, 2, 3)
	for i := range src.MutableCPUData() {
		src.MutableCPUData()[i] = T(i)
		src.MutableCPUDiff()[i] = T(-i)
	}
	dst := mustNew[T](t, 3, 2)
	err := dst.CopyFrom(src, false, false)
	if err == nil || !strings.Contains(err.Error(), "different sizes") {
		t.Fatalf("CopyFrom of a different shape without reshape: err = %v", err)
	}
	if err := dst.CopyFrom(src, false, true); err != nil {
		t.Fatal(err)
	}
	if !dst.SameShape(src) || !slices.Equal(dst.CPUData(), src.CPUData()) {
		t.Errorf("CopyFrom data: shape %v data %v", dst.Shape(), dst.CPUData())
	}
	if mathfn.Asum(6, dst.CPUDiff()) != 0 {
		t.Error("copying the data also copied the diff")
	}
	if err := dst.CopyFrom(src, true, false); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dst.CPUDiff(), src.CPUDiff()) {
		t.Errorf("CopyFrom diff: %v", dst.CPUDiff())
	}
}

func TestShare(t *testing.T) { forBothTypes(t, testShare[float32], testShare[float64]) }

func testShare[T Float](t *testing.T) {
	a, b := mustNew[T](t, 2, 2), mustNew[T](t, 4)
	if err := b.ShareData(a); err != nil {
		t.Fatal(err)
	}
	if err := b.ShareDiff(a); err != nil {
		t.Fatal(err)
	}
	a.MutableCPUData()[3] = 5
	b.MutableCPUDiff()[0] = 7
	if b.CPUData()[3] != 5 || a.CPUDiff()[0] != 7 {
		t.Error("shared blobs do not see each other's writes")
	}
	c := mustNew[T](t, 5)
	if err := c.ShareData(a); err == nil {
		t.Error("ShareData of a different count succeeded")
	}
	if err := c.ShareDiff(a); err == nil {
		t.Error("ShareDiff of a different count succeeded")
	}
}

func TestSetCPUData(t *testing.T) { forBothTypes(t, testSetCPUData[float32], testSetCPUData[float64]) }

func testSetCPUData[T Float](t *testing.T) {
	b := mustNew[T](t, 4, 5)
	if err := b.Reshape([]int{2, 3}); err != nil { // capacity 20, count 6
		t.Fatal(err)
	}
	own := []T{1, 2, 3, 4, 5, 6}
	if err := b.SetCPUData(own); err != nil {
		t.Fatal(err)
	}
	if b.Data().Size() != 6*elemSize[T]() || b.Diff().Size() != 6*elemSize[T]() {
		t.Errorf("SetCPUData did not fit the memory to the count: %d bytes", b.Data().Size())
	}
	b.MutableCPUData()[0] = 10
	if own[0] != 10 || !slices.Equal(b.CPUData(), own) {
		t.Error("blob does not use the adopted slice")
	}
	if err := b.SetCPUData(make([]T, 5)); err == nil {
		t.Error("SetCPUData with too few elements succeeded")
	}
	if err := b.SetCPUDiff([]T{6, 5, 4, 3, 2, 1}); err != nil || b.CPUDiff()[0] != 6 {
		t.Errorf("SetCPUDiff: %v %v", err, b.CPUDiff())
	}
}

func TestMathFunctions(t *testing.T) {
	forBothTypes(t, testMathFunctions[float32], testMathFunctions[float64])
}

// testMathFunctions mirrors test_blob's TestMathFunctions on the CPU: sums
// of an uninitialized blob are zero, then asum, sumsq and scale agree with
// loops for data and diff, and Update subtracts the diff.
func testMathFunctions[T Float](t *testing.T) {
	b := mustNew[T](t, 2, 3, 4, 5)
	if b.Data().Head() != syncedmem.Uninitialized || b.AsumData() != 0 || b.SumsqData() != 0 || b.AsumDiff() != 0 || b.SumsqDiff() != 0 {
		t.Fatal("sums of an uninitialized blob are not zero")
	}
	b.ScaleData(3) // must be a no-op
	if b.Data().Head() != syncedmem.Uninitialized {
		t.Error("ScaleData of uninitialized data allocated it")
	}
	rng := mathfn.NewRNG(1701)
	mathfn.RngUniform(b.Count(), -3, 3, b.MutableCPUData(), rng)
	mathfn.RngUniform(b.Count(), -2, 2, b.MutableCPUDiff(), rng)
	data, diff := slices.Clone(b.CPUData()), slices.Clone(b.CPUDiff())
	var asum, sumsq, asumDiff, sumsqDiff float64
	for i := range data {
		asum += math.Abs(float64(data[i]))
		sumsq += float64(data[i]) * float64(data[i])
		asumDiff += math.Abs(float64(diff[i]))
		sumsqDiff += float64(diff[i]) * float64(diff[i])
	}
	near(t, "AsumData", float64(b.AsumData()), asum)
	near(t, "SumsqData", float64(b.SumsqData()), sumsq)
	near(t, "AsumDiff", float64(b.AsumDiff()), asumDiff)
	near(t, "SumsqDiff", float64(b.SumsqDiff()), sumsqDiff)

	b.ScaleData(0.25)
	near(t, "AsumData after ScaleData(0.25)", float64(b.AsumData()), asum*0.25)
	b.ScaleDiff(-2)
	near(t, "AsumDiff after ScaleDiff(-2)", float64(b.AsumDiff()), asumDiff*2)

	b.Update()
	for i, v := range b.CPUData() {
		want := float64(data[i])*0.25 - float64(diff[i])*-2
		if math.Abs(float64(v)-want) > 1e-5 {
			t.Fatalf("Update: data[%d] = %v, want %v", i, v, want)
		}
	}
	fresh := mustNew[T](t, 3)
	assertPanics(t, "Update of uninitialized data", fresh.Update)
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func assertPanics(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

// SwapData and SwapDiff exchange memory only between blobs of one count
// and capacity whose memory no other blob shares.
func TestSwapMemory(t *testing.T) {
	a, _ := New[float32](2, 3)
	b, _ := New[float32](2, 3)
	copy(a.MutableCPUData(), []float32{1, 2, 3, 4, 5, 6})
	copy(b.MutableCPUDiff(), []float32{7, 8, 9, 10, 11, 12})
	if !a.SwapData(b) || b.CPUData()[5] != 6 || a.CPUData()[5] != 0 {
		t.Fatalf("SwapData: a %v, b %v", a.CPUData(), b.CPUData())
	}
	if !a.SwapDiff(b) || a.CPUDiff()[0] != 7 || b.CPUDiff()[0] != 0 {
		t.Fatalf("SwapDiff: a %v, b %v", a.CPUDiff(), b.CPUDiff())
	}
	c, _ := New[float32](3, 2, 1) // same count, other shape: swappable
	if !a.DataSwappable(c) {
		t.Error("blobs of one count and capacity are not swappable")
	}
	d, _ := New[float32](7)
	if a.SwapData(d) || a.SwapDiff(d) || a.SwapData(a) {
		t.Error("swapped with a blob of another count, or with itself")
	}
	e, _ := New[float32](2, 3)
	if err := e.ShareData(a); err != nil {
		t.Fatal(err)
	}
	if a.SwapData(b) || b.SwapData(e) {
		t.Error("swapped data that another blob shares")
	}
	if !a.SwapDiff(b) {
		t.Error("the diffs are not shared, yet not swapped")
	}
}

// BorrowData takes a larger blob's memory, which both then see, releasing
// the blob's own; a blob whose memory is shared, or that needs more than
// the other holds, is refused;
// a Reshape past the blob's own capacity gives it its own memory again.
func TestBorrowData(t *testing.T) {
	lender, err := New[float32](4, 5)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New[float32](3, 2)
	if err := b.BorrowData(lender); err != nil {
		t.Fatal(err)
	}
	b.MutableCPUData()[5] = 7
	if lender.CPUData()[5] != 7 || b.Data() != lender.Data() || lender.Data().Shared() {
		t.Errorf("borrowed memory not the lender's, or marked shared")
	}
	if err := b.Reshape([]int{2, 3}); err != nil || b.Data() != lender.Data() {
		t.Errorf("a Reshape within the blob's 6 elements left the memory: %v", err)
	}
	// Past its own capacity (its diff's size) the blob takes new memory.
	if err := b.Reshape([]int{3, 3}); err != nil || b.Data() == lender.Data() {
		t.Errorf("a Reshape past the blob's 6 elements kept the lender's memory: %v", err)
	}
	big, _ := New[float32](30)
	if err := big.BorrowData(lender); err == nil || !strings.Contains(err.Error(), "20 elements, 30 needed") {
		t.Errorf("borrowing 30 of 20 elements: %v", err)
	}
	used, _ := New[float32](2)
	used.MutableCPUData()[0] = 1
	if err := used.BorrowData(lender); err != nil || used.Data() != lender.Data() {
		t.Errorf("borrowing in place of allocated data: %v", err)
	}
	alias, _ := New[float32](2)
	other, _ := New[float32](2)
	alias.ShareData(other)
	if err := alias.BorrowData(lender); err == nil || !strings.Contains(err.Error(), "shared") {
		t.Errorf("borrowing in place of shared data: %v", err)
	}
}

// PlaceData and PlaceDiff put a blob in a larger memory, which the blob
// then reads and writes, release the blob's own memory unless it is
// shared, refuse memory too small, and keep the capacity at what both
// memories hold, so that a Reshape past it gives the blob its own again.
func TestPlace(t *testing.T) {
	b, _ := New[float32](2, 3)
	b.MutableCPUData()[0] = 5 // allocated: released by the placing
	own := b.Data()
	slot := syncedmem.New(40 * 4)
	if err := b.PlaceData(slot); err != nil {
		t.Fatal(err)
	}
	if b.Data() != slot || own.Head() != syncedmem.Uninitialized {
		t.Errorf("data not in the slot (%v), or its own memory not released (%v)", b.Data() == slot, own.Head())
	}
	b.MutableCPUData()[5] = 7
	if got := asT[float32](slot.CPUData(), 40)[5]; got != 7 {
		t.Errorf("a write through the blob left %v in the slot", got)
	}
	if b.Capacity() != 6 {
		t.Errorf("capacity %d with a diff of 6 elements", b.Capacity())
	}
	diffSlot := syncedmem.New(10 * 4)
	if err := b.PlaceDiff(diffSlot); err != nil || b.Capacity() != 10 {
		t.Fatalf("PlaceDiff: %v, capacity %d, want 10", err, b.Capacity())
	}
	if err := b.Reshape([]int{10}); err != nil || b.Data() != slot || b.Diff() != diffSlot {
		t.Errorf("a Reshape within the capacity left the slots: %v", err)
	}
	if err := b.Reshape([]int{11}); err != nil || b.Data() == slot || b.Diff() == diffSlot {
		t.Errorf("a Reshape past the capacity kept the slots: %v", err)
	}
	if err := b.PlaceData(syncedmem.New(10 * 4)); err == nil || !strings.Contains(err.Error(), "40 bytes, 44 needed") {
		t.Errorf("placing 11 elements in 10: %v", err)
	}
	shared, _ := New[float32](3)
	alias, _ := New[float32](3)
	alias.ShareData(shared)
	shared.MutableCPUData()[0] = 1
	if err := shared.PlaceData(syncedmem.New(12)); err != nil {
		t.Fatal(err)
	}
	if alias.CPUData()[0] != 1 {
		t.Error("placing a blob released memory another blob shares")
	}
}

// TestExchangeData: a layer may exchange data memories a net's plan
// placed (marked shared) for part of a pass and exchange them back; each
// blob's capacity follows its memories, and blobs of other counts or
// storages are refused with an error.
func TestExchangeData(t *testing.T) {
	a, _ := New[float32](2, 3)
	b, _ := New[float32](3, 2)
	slot := syncedmem.New(10 * 4)
	slot.MarkShared()
	if err := a.PlaceData(slot); err != nil {
		t.Fatal(err)
	}
	if err := a.PlaceDiff(syncedmem.New(10 * 4)); err != nil || a.Capacity() != 10 {
		t.Fatalf("PlaceDiff: %v, capacity %d", err, a.Capacity())
	}
	copy(a.MutableCPUData(), []float32{1, 2, 3, 4, 5, 6})
	copy(b.MutableCPUData(), []float32{7, 8, 9, 10, 11, 12})
	own := b.Data()
	if a.DataSwappable(b) {
		t.Fatal("placed memory is swappable for SwapData")
	}
	if err := a.ExchangeData(b); err != nil {
		t.Fatal(err)
	}
	if a.Data() != own || b.Data() != slot || a.CPUData()[0] != 7 || b.CPUData()[5] != 6 {
		t.Fatalf("after the exchange a %v, b %v", a.CPUData(), b.CPUData())
	}
	if a.Capacity() != 6 || b.Capacity() != 6 { // b's own diff holds 6
		t.Errorf("capacities %d, %d after the exchange, want 6, 6", a.Capacity(), b.Capacity())
	}
	if err := b.ExchangeData(a); err != nil || a.Data() != slot || b.Data() != own || a.Capacity() != 10 || b.Capacity() != 6 {
		t.Errorf("exchanged back: %v; a in the slot %v, capacities %d, %d", err, a.Data() == slot, a.Capacity(), b.Capacity())
	}
	c, _ := New[float32](7)
	if err := a.ExchangeData(c); err == nil || !strings.Contains(err.Error(), "count 6") {
		t.Errorf("a blob of another count: %v", err)
	}
	if err := a.ExchangeData(a); err == nil {
		t.Error("exchanged with itself")
	}
	h, _ := New[float32](2, 3)
	if err := h.SetStorage(syncedmem.StorageFloat16); err != nil {
		t.Fatal(err)
	}
	if err := b.ExchangeData(h); err == nil {
		t.Error("exchanged memories of FP32 and FLOAT16 storage")
	}
}
