package datalayer_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// testBackend is the database backend the data layer tests write and read;
// eachBackend runs a test once with each.
var testBackend = caffepb.DataParameter_LEVELDB

// eachBackend runs test as a subtest for LevelDB and for LMDB, with
// testBackend set accordingly (the data tests do not run in parallel).
func eachBackend(t *testing.T, test func(t *testing.T)) {
	for _, b := range []caffepb.DataParameter_DB{caffepb.DataParameter_LEVELDB, caffepb.DataParameter_LMDB} {
		t.Run(b.String(), func(t *testing.T) {
			defer func(old caffepb.DataParameter_DB) { testBackend = old }(testBackend)
			testBackend = b
			test(t)
		})
	}
}

// writeRecords writes serialized records under the keys 00000000,
// 00000001, ... (convert_mnist_data's keys) and returns the database path.
func writeRecords(t testing.TB, records [][]byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	db, err := data.Open(testBackend, dir, data.New)
	if err != nil {
		t.Fatal(err)
	}
	txn, err := db.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range records {
		if err := txn.Put(fmt.Appendf(nil, "%08d", i), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func marshalDatums(t testing.TB, datums []*caffepb.Datum) [][]byte {
	t.Helper()
	out := make([][]byte, len(datums))
	for i, d := range datums {
		b, err := proto.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

func writeDatums(t testing.TB, datums []*caffepb.Datum) string {
	t.Helper()
	return writeRecords(t, marshalDatums(t, datums))
}

// itemValue is value j of numbered datum i: every datum differs, so a
// batch shows which records it holds and in which order.
func itemValue(i, j int) byte { return byte(i*16 + j) }

// numbered returns n raw datums of c x h x w bytes, datum i holding
// itemValue(i, j) at j and label 100+i.
func numbered(n, c, h, w int) []*caffepb.Datum {
	out := make([]*caffepb.Datum, n)
	for i := range out {
		pix := make([]byte, c*h*w)
		for j := range pix {
			pix[j] = itemValue(i, j)
		}
		out[i] = &caffepb.Datum{Channels: proto.Int32(int32(c)), Height: proto.Int32(int32(h)), Width: proto.Int32(int32(w)),
			Data: pix, Label: proto.Int32(int32(100 + i))}
	}
	return out
}

// dataText is a Data layer reading src.
func dataText(src, dataParam, rest string) string {
	return fmt.Sprintf(`type: "Data" data_param { source: "%s" backend: %v %s } %s`, src, testBackend, dataParam, rest)
}

type closer interface{ Close() error }

// setUpSource builds the layer from text with the given seed, sets it up
// on nTop tops and closes it when the test ends.
func setUpSource[T layer.Float](t testing.TB, text string, seed uint64, nTop int) (layer.Layer[T], []*blob.Blob[T]) {
	t.Helper()
	l := layertest.New[T](t, text)
	l.LayerBase().SetRNG(mathfn.NewRNG(seed))
	top := layertest.Blobs[T](t, nTop)
	t.Cleanup(func() {
		if err := l.(closer).Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	layertest.SetUp(t, l, nil, top)
	return l, top
}

// setUpError sets the layer up and returns the error it must give.
func setUpError(t *testing.T, text string, nTop int) error {
	t.Helper()
	l := layertest.New[float32](t, text)
	err := layer.SetUp(l, nil, layertest.Blobs[float32](t, nTop))
	if err == nil {
		if c, ok := l.(closer); ok {
			c.Close()
		}
		t.Fatalf("%s: SetUp succeeded, want an error", text)
	}
	return err
}

// wantError fails unless err contains every part.
func wantError(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want one containing %q", what, parts)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not contain %q", what, err, p)
		}
	}
}

// batches runs n forward passes and returns copies of the tops' data.
func batches[T layer.Float](t testing.TB, l layer.Layer[T], top []*blob.Blob[T], n int) [][][]T {
	t.Helper()
	var out [][][]T
	for range n {
		layertest.Forward(t, l, nil, top)
		var pass [][]T
		for _, b := range top {
			pass = append(pass, append([]T(nil), b.CPUData()...))
		}
		out = append(out, pass)
	}
	return out
}

// logBuffer captures log lines; the prefetch goroutine logs too.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// captureLog sends the lines of layers without a logger of their own
// (slog.Default()), in glog's format, to a buffer until the test ends.
func captureLog(t *testing.T) *logBuffer {
	lb := &logBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(glog.NewHandler(lb)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return lb
}

// grayImage is a w x h gray image whose pixel i (row-major) is base+i.
func grayImage(w, h int, base byte) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = base + byte(i)
	}
	return img
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
