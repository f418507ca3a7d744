package datalayer_test

import (
	"bytes"
	"fmt"
	"image/jpeg"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// checkItems checks that a batch holds the numbered datums idx (values and
// labels), untransformed.
func checkItems(t *testing.T, what string, pass [][]float32, size int, idx ...int) {
	t.Helper()
	for k, i := range idx {
		for j := range size {
			if got, want := pass[0][k*size+j], float32(itemValue(i, j)); got != want {
				t.Fatalf("%s: item %d value %d = %v, want %v (datum %d)", what, k, j, got, want, i)
			}
		}
		if len(pass) > 1 && pass[1][k] != float32(100+i) {
			t.Fatalf("%s: label %d = %v, want %v", what, k, pass[1][k], 100+i)
		}
	}
}

// TestDataReadsInOrderAndWraps: batches hold the records in key order,
// with their labels, and go on from the first record after the last (in
// the middle of a batch), with and without prefetching.
func TestDataReadsInOrderAndWraps(t *testing.T) { eachBackend(t, testDataReadsInOrderAndWraps) }

func testDataReadsInOrderAndWraps(t *testing.T) {
	src := writeDatums(t, numbered(5, 1, 2, 3))
	for _, prefetch := range []int{0, 1, 4} {
		log := captureLog(t)
		l, top := setUpSource[float32](t, dataText(src, fmt.Sprintf("batch_size: 2 prefetch: %d", prefetch), ""), 1, 2)
		if !slices.Equal(top[0].Shape(), []int{2, 1, 2, 3}) || !slices.Equal(top[1].Shape(), []int{2}) {
			t.Fatalf("tops shaped %v and %v, want [2 1 2 3] and [2]", top[0].Shape(), top[1].Shape())
		}
		got := batches(t, l, top, 5)
		what := fmt.Sprintf("prefetch %d", prefetch)
		for b, idx := range [][]int{{0, 1}, {2, 3}, {4, 0}, {1, 2}, {3, 4}} {
			checkItems(t, fmt.Sprintf("%s, batch %d", what, b), got[b], 6, idx...)
		}
		if err := l.(closer).Close(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), "Restarting data prefetching from start.") {
			t.Errorf("%s: no restart logged:\n%s", what, log)
		}
	}
}

// TestDataOneTop: without a label top only the data is produced.
func TestDataOneTop(t *testing.T) {
	src := writeDatums(t, numbered(3, 2, 1, 2))
	l, top := setUpSource[float64](t, dataText(src, "batch_size: 3", ""), 1, 1)
	layertest.Forward(t, l, nil, top)
	want := make([]float64, 0, 12)
	for i := range 3 {
		for j := range 4 {
			want = append(want, float64(itemValue(i, j)))
		}
	}
	layertest.CheckClose(t, "one top", top[0].CPUData(), want, 0)
}

// TestDataTransforms: transform_param is applied to every item (centre
// crop in TEST, mean value, scale).
func TestDataTransforms(t *testing.T) {
	src := writeDatums(t, numbered(2, 1, 3, 3))
	l, top := setUpSource[float32](t, dataText(src, "batch_size: 2", `phase: TEST transform_param { crop_size: 1 mean_value: 4 scale: 0.5 }`), 1, 2)
	if !slices.Equal(top[0].Shape(), []int{2, 1, 1, 1}) {
		t.Fatalf("cropped top shaped %v, want [2 1 1 1]", top[0].Shape())
	}
	layertest.Forward(t, l, nil, top)
	want := []float32{(float32(itemValue(0, 4)) - 4) * 0.5, (float32(itemValue(1, 4)) - 4) * 0.5}
	layertest.CheckClose(t, "transformed", top[0].CPUData(), want, 0)
}

// TestDataEncoded: encoded datums are decoded (force_gray here) before the
// transformation.
func TestDataEncoded(t *testing.T) { eachBackend(t, testDataEncoded) }

func testDataEncoded(t *testing.T) {
	var datums []*caffepb.Datum
	for i := range 3 {
		datums = append(datums, &caffepb.Datum{Data: encodePNG(t, grayImage(4, 3, byte(10*i))), Encoded: proto.Bool(true), Label: proto.Int32(int32(i))})
	}
	src := writeDatums(t, datums)
	l, top := setUpSource[float32](t, dataText(src, "batch_size: 3", `transform_param { force_gray: true }`), 1, 2)
	if !slices.Equal(top[0].Shape(), []int{3, 1, 3, 4}) {
		t.Fatalf("top shaped %v, want [3 1 3 4]", top[0].Shape())
	}
	layertest.Forward(t, l, nil, top)
	for i := range 3 {
		if v := top[0].CPUData()[i*12+5]; v != float32(10*i+5) {
			t.Errorf("image %d pixel 5 = %v, want %v", i, v, 10*i+5)
		}
	}
	layertest.CheckClose(t, "labels", top[1].CPUData(), []float32{0, 1, 2}, 0)
}

// TestDataRandSkip: the first item is a record in [0, rand_skip), and the
// following ones go on from there; different seeds skip differently.
func TestDataRandSkip(t *testing.T) {
	src := writeDatums(t, numbered(10, 1, 1, 1))
	firsts := map[int]bool{}
	for seed := range uint64(12) {
		l, top := setUpSource[float32](t, dataText(src, "batch_size: 3 rand_skip: 5", ""), seed, 2)
		layertest.Forward(t, l, nil, top)
		first := int(top[1].CPUData()[0]) - 100
		if first < 0 || first >= 5 {
			t.Fatalf("seed %d: first record %d, want one in [0, 5)", seed, first)
		}
		layertest.CheckClose(t, "labels after the skip", top[1].CPUData(), []float32{float32(100 + first), float32(101 + first), float32(102 + first)}, 0)
		firsts[first] = true
		l.(closer).Close()
	}
	if len(firsts) < 2 {
		t.Errorf("12 seeds all skipped to the same record %v", firsts)
	}
}

// TestDataDeterministic: the same seed gives the same batches (random crops
// and mirrors included), with or without prefetching (which begins a batch
// before the one before it finishes); another seed does not. Raw records
// draw their choices as they are read, encoded ones once decoded: the
// mixed database checks that the order holds across batches.
func TestDataDeterministic(t *testing.T) {
	mixed := numbered(7, 1, 6, 5)
	for _, i := range []int{1, 2, 4} {
		mixed[i] = &caffepb.Datum{Data: encodePNG(t, grayImage(5, 6, byte(30*i))), Encoded: proto.Bool(true), Label: proto.Int32(int32(i))}
	}
	t.Run("raw", func(t *testing.T) { testDataDeterministic(t, numbered(7, 2, 6, 5), "") })
	t.Run("mixed", func(t *testing.T) { testDataDeterministic(t, mixed, "") })
}

func testDataDeterministic(t *testing.T, datums []*caffepb.Datum, transform string) {
	src := writeDatums(t, datums)
	text := func(prefetch int) string {
		return dataText(src, fmt.Sprintf("batch_size: 3 prefetch: %d", prefetch), `transform_param { crop_size: 3 mirror: true `+transform+` }`)
	}
	run := func(seed uint64, prefetch int) [][][]float32 {
		l, top := setUpSource[float32](t, text(prefetch), seed, 2)
		defer l.(closer).Close() // LevelDB allows one reader per process
		return batches(t, l, top, 6)
	}
	a, b, sync, other := run(42, 4), run(42, 4), run(42, 0), run(43, 4)
	for i := range a {
		if !slices.Equal(a[i][0], b[i][0]) || !slices.Equal(a[i][1], b[i][1]) {
			t.Fatalf("batch %d differs between two runs with the same seed", i)
		}
		if !slices.Equal(a[i][0], sync[i][0]) {
			t.Fatalf("batch %d differs between prefetch 4 and prefetch 0", i)
		}
	}
	same := true
	for i := range a {
		same = same && slices.Equal(a[i][0], other[i][0])
	}
	if same {
		t.Error("seeds 42 and 43 gave the same six batches of random crops and mirrors")
	}
}

func TestDataSetUpErrors(t *testing.T) { eachBackend(t, testDataSetUpErrors) }

func testDataSetUpErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no_such_db")
	wantError(t, "missing database", setUpError(t, dataText(missing, "batch_size: 1", ""), 2), `layer "Data" (Data)`, missing)

	corrupt := filepath.Join(t.TempDir(), "corrupt_db")
	if err := os.MkdirAll(corrupt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(corrupt, "CURRENT"), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantError(t, "corrupt database", setUpError(t, dataText(corrupt, "batch_size: 1", ""), 2), corrupt)

	empty := writeRecords(t, nil)
	wantError(t, "empty database", setUpError(t, dataText(empty, "batch_size: 1", ""), 2), empty, "is empty")

	src := writeDatums(t, numbered(2, 1, 2, 2))
	wantError(t, "batch_size", setUpError(t, dataText(src, "", ""), 2), "batch_size must be positive")
	wantError(t, "crop", setUpError(t, dataText(src, "batch_size: 1", `transform_param { crop_size: 3 }`), 2), src, `record "00000000"`, "crop_size 3")
	wantError(t, "three tops", setUpError(t, dataText(src, "batch_size: 1", ""), 3), "takes at most 2 top")
	bad := writeRecords(t, [][]byte{{0xff, 0xff}})
	wantError(t, "undecodable first record", setUpError(t, dataText(bad, "batch_size: 1", ""), 2), bad, `record "00000000"`, "malformed Datum")
}

// forwardError runs forward passes until one fails (at most n) and checks
// that the error persists and Close still works.
func forwardError(t *testing.T, text string, okPasses int) error {
	t.Helper()
	l, top := setUpSource[float32](t, text, 1, 2)
	for i := range okPasses {
		if _, err := layer.Forward(l, nil, top); err != nil {
			t.Fatalf("pass %d failed early: %v", i, err)
		}
	}
	_, err := layer.Forward(l, nil, top)
	if _, again := layer.Forward(l, nil, top); again == nil || err == nil || again.Error() != err.Error() {
		t.Errorf("the error did not persist: first %v, then %v", err, again)
	}
	if cerr := l.(closer).Close(); cerr != nil {
		t.Errorf("Close after the error: %v", cerr)
	}
	return err
}

// TestDataRecordErrors: a record that cannot be used fails the Forward
// that reaches it, naming the layer, the database and the key, after the
// good batches before it, with and without prefetching.
func TestDataRecordErrors(t *testing.T) { eachBackend(t, testDataRecordErrors) }

func testDataRecordErrors(t *testing.T) {
	datums := numbered(6, 1, 2, 2)
	datums[5] = numbered(6, 1, 2, 3)[5] // another shape than record 4, the first of its batch
	shape := writeDatums(t, datums)
	records := marshalDatums(t, numbered(6, 1, 2, 2))
	records[5] = []byte("\x0a\xff") // a truncated field
	garbage := writeRecords(t, records)
	datums = numbered(6, 1, 2, 2)
	datums[3] = &caffepb.Datum{Data: []byte("no image"), Encoded: proto.Bool(true)}
	encoded := writeDatums(t, datums)
	for _, prefetch := range []string{"prefetch: 0", "prefetch: 3"} {
		wantError(t, "shape", forwardError(t, dataText(shape, "batch_size: 2 "+prefetch, ""), 2),
			`layer "Data" (Data)`, shape, `record "00000005"`, "datum of shape 1x2x3", "first record of its batch gives 1x2x2")
		wantError(t, "garbage", forwardError(t, dataText(garbage, "batch_size: 2 "+prefetch, ""), 2),
			`layer "Data" (Data)`, garbage, `record "00000005"`, "malformed Datum")
		wantError(t, "undecodable image", forwardError(t, dataText(encoded, "batch_size: 2 "+prefetch, ""), 1),
			`layer "Data" (Data)`, encoded, `record "00000003"`, "decoding an encoded datum")
	}
}

// TestDataClose: Close may be called twice, Forward fails afterwards, and
// the database is closed (LevelDB admits one process-wide reader, so
// opening it again proves it).
func TestDataClose(t *testing.T) { eachBackend(t, testDataClose) }

func testDataClose(t *testing.T) {
	src := writeDatums(t, numbered(4, 1, 1, 1))
	l, top := setUpSource[float32](t, dataText(src, "batch_size: 2", ""), 1, 2)
	layertest.Forward(t, l, nil, top)
	if err := l.(closer).Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.(closer).Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err := layer.Forward(l, nil, top)
	wantError(t, "Forward after Close", err, `layer "Data" (Data)`, "closed")
	db, err := data.Open(testBackend, src, data.Read)
	if err != nil {
		t.Fatalf("database still open after Close: %v", err)
	}
	db.Close()
}

// TestDataDroppedLayerIsCleanedUp: a layer dropped without Close has its
// goroutine stopped and its database closed by the garbage collector.
func TestDataDroppedLayerIsCleanedUp(t *testing.T) {
	src := writeDatums(t, numbered(4, 1, 1, 1))
	func() {
		l := layertest.New[float32](t, dataText(src, "batch_size: 2", ""))
		layertest.SetUp(t, l, nil, layertest.Blobs[float32](t, 2))
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		db, err := data.Open(testBackend, src, data.Read)
		if err == nil {
			db.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dropped layer's database is still open: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDataForwardDoesNotAllocate: in steady state a forward pass allocates
// nothing, the prefetch goroutine's reading, parsing and transformation of
// raw datums included (testing.AllocsPerRun counts every goroutine).
func TestDataForwardDoesNotAllocate(t *testing.T) { eachBackend(t, testDataForwardDoesNotAllocate) }

func testDataForwardDoesNotAllocate(t *testing.T) {
	src := writeDatums(t, numbered(4000, 1, 28, 28))
	for _, prefetch := range []int{0, 4} {
		l, top := setUpSource[float32](t, dataText(src, fmt.Sprintf("batch_size: 64 prefetch: %d", prefetch), `transform_param { scale: 0.00390625 }`), 1, 2)
		n := testing.AllocsPerRun(40, func() {
			if _, err := layer.Forward(l, nil, top); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("prefetch %d: %v allocations per Forward (batch 64, 1x28x28)", prefetch, n)
		if n > 0.5 {
			t.Errorf("prefetch %d: %v allocations per Forward, want 0", prefetch, n)
		}
		l.(closer).Close()
	}
}

// TestDataShardsByRank: in a data-parallel job each rank's TRAIN net reads
// the records at positions rank, rank+ranks, ... (wrapping round as one
// reader would), as Caffe's DataLayer::Skip; a TEST net reads them all.
func TestDataShardsByRank(t *testing.T) {
	src := writeDatums(t, numbered(7, 1, 1, 2))
	for _, c := range []struct {
		rank  int
		phase string
		want  [][]int
	}{
		{0, "TRAIN", [][]int{{0, 2}, {4, 6}, {1, 3}}},
		{1, "TRAIN", [][]int{{1, 3}, {5, 0}, {2, 4}}},
		{1, "TEST", [][]int{{0, 1}, {2, 3}, {4, 5}}},
	} {
		for _, prefetch := range []int{0, 3} {
			ctx := device.New(nil)
			ctx.SetShard(c.rank, 2)
			l := layertest.New[float32](t, dataText(src, fmt.Sprintf("batch_size: 2 prefetch: %d", prefetch), "phase: "+c.phase))
			l.LayerBase().SetContext(ctx)
			top := layertest.Blobs[float32](t, 2)
			layertest.SetUp(t, l, nil, top)
			got := batches(t, l, top, len(c.want))
			for b, idx := range c.want {
				checkItems(t, fmt.Sprintf("rank %d %s prefetch %d batch %d", c.rank, c.phase, prefetch, b), got[b], 2, idx...)
			}
			if err := l.(closer).Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestDataShapesEachBatch: as in Caffe, each batch takes the shape of its
// first record, so records of several sizes pass one at a time, with and
// without prefetching: raw ones, a PNG and a JPEG (shaped from its
// header), and the same images forced to colour.
func TestDataShapesEachBatch(t *testing.T) {
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, grayImage(7, 5, 40), &jpeg.Options{Quality: 100}); err != nil {
		t.Fatal(err)
	}
	raw := func(c, h, w int, v byte) *caffepb.Datum {
		return &caffepb.Datum{Channels: proto.Int32(int32(c)), Height: proto.Int32(int32(h)), Width: proto.Int32(int32(w)),
			Data: bytes.Repeat([]byte{v}, c*h*w), Label: proto.Int32(int32(v))}
	}
	encoded := func(b []byte, label int32) *caffepb.Datum {
		return &caffepb.Datum{Data: b, Encoded: proto.Bool(true), Label: proto.Int32(label)}
	}
	png := encodePNG(t, grayImage(4, 6, 10))
	mixed := writeDatums(t, []*caffepb.Datum{raw(1, 2, 3, 1), encoded(png, 2), raw(1, 3, 3, 3), encoded(jpg.Bytes(), 4)})
	images := writeDatums(t, []*caffepb.Datum{encoded(png, 1), encoded(jpg.Bytes(), 2)})
	for _, c := range []struct {
		src, transform string
		records        int
		want           [][]int
	}{
		{mixed, "", 4, [][]int{{1, 1, 2, 3}, {1, 1, 6, 4}, {1, 1, 3, 3}, {1, 1, 5, 7}, {1, 1, 2, 3}, {1, 1, 6, 4}}},
		{images, "force_color: true", 2, [][]int{{1, 3, 6, 4}, {1, 3, 5, 7}, {1, 3, 6, 4}}},
	} {
		for _, prefetch := range []int{0, 3} {
			l, top := setUpSource[float32](t, dataText(c.src, fmt.Sprintf("batch_size: 1 prefetch: %d", prefetch), "transform_param { "+c.transform+" }"), 1, 2)
			for k, shape := range c.want {
				layertest.Forward(t, l, nil, top)
				if !slices.Equal(top[0].Shape(), shape) {
					t.Fatalf("%q, prefetch %d, pass %d: data shaped %v, want %v", c.transform, prefetch, k, top[0].Shape(), shape)
				}
				if got, want := top[1].CPUData()[0], float32(k%c.records+1); got != want {
					t.Fatalf("prefetch %d, pass %d: label %v, want %v", prefetch, k, got, want)
				}
			}
			l.(closer).Close()
		}
	}
}
