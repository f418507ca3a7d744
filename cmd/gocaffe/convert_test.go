package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// The dataset tools are tested by running their commands in-process
// through run, like the other commands' tests, and reading what they wrote
// back with data.Open.

// fashionDir is where Debian's dataset-fashion-mnist installs the data set.
const fashionDir = "/usr/share/datasets/fashion-mnist"

// backends are the database backends the tools are tested with.
var backends = []caffepb.DataParameter_DB{caffepb.DataParameter_LEVELDB, caffepb.DataParameter_LMDB}

// forEachBackend runs f for each backend data.Open provides, skipping the
// ones not built in.
func forEachBackend(t *testing.T, f func(t *testing.T, backend caffepb.DataParameter_DB, name string)) {
	for _, b := range backends {
		name := strings.ToLower(b.String())
		t.Run(name, func(t *testing.T) {
			requireBackend(t, b)
			f(t, b, name)
		})
	}
}

// requireBackend skips the test when data.Open does not provide backend.
func requireBackend(tb testing.TB, backend caffepb.DataParameter_DB) {
	tb.Helper()
	db, err := data.Open(backend, filepath.Join(tb.TempDir(), "probe"), data.New)
	if err != nil {
		if strings.Contains(err.Error(), "is not available") {
			tb.Skipf("backend %v: %v", backend, err)
		}
		tb.Fatal(err)
	}
	db.Close()
}

// captureLog sends glog's lines to a buffer for the rest of the test.
func captureLog(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	prev := glog.SetOutput(&buf)
	t.Cleanup(func() { glog.SetOutput(prev) })
	return &buf
}

type record struct {
	key   string
	datum *caffepb.Datum
}

// readDB returns every record of a database of Datums, in key order.
func readDB(t *testing.T, backend caffepb.DataParameter_DB, path string) []record {
	t.Helper()
	var out []record
	for _, kv := range readDBValues(t, backend, path) {
		d := &caffepb.Datum{}
		if err := proto.Unmarshal(kv[1], d); err != nil {
			t.Fatalf("record %q: %v", kv[0], err)
		}
		out = append(out, record{string(kv[0]), d})
	}
	return out
}

// readDBValues returns the keys and values of a database, in key order.
func readDBValues(t *testing.T, backend caffepb.DataParameter_DB, path string) [][2][]byte {
	t.Helper()
	db, err := data.Open(backend, path, data.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cur, err := db.NewCursor()
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	var out [][2][]byte
	for cur.Valid() {
		out = append(out, [2][]byte{bytes.Clone(cur.Key()), bytes.Clone(cur.Value())})
		if err := cur.Next(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// idxFile builds an IDX file: magic, dimensions, payload.
func idxFile(magic uint32, dims []int, payload []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(payload)
	return b.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func writeTestFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// mnistSet is a small MNIST-format data set the tests make.
type mnistSet struct {
	n, rows, cols int
	pixels        []byte
	labels        []byte
}

func newMNISTSet(n, rows, cols int) *mnistSet {
	s := &mnistSet{n: n, rows: rows, cols: cols, pixels: make([]byte, n*rows*cols), labels: make([]byte, n)}
	for i := range s.pixels {
		s.pixels[i] = byte(i*31 + i/7)
	}
	for i := range s.labels {
		s.labels[i] = byte((i * 3) % 10)
	}
	return s
}

func (s *mnistSet) imagesIDX() []byte {
	return idxFile(mnistImagesMagic, []int{s.n, s.rows, s.cols}, s.pixels)
}
func (s *mnistSet) labelsIDX() []byte { return idxFile(mnistLabelsMagic, []int{s.n}, s.labels) }

// check compares a converted database with the set.
func (s *mnistSet) check(t *testing.T, recs []record) {
	t.Helper()
	if len(recs) != s.n {
		t.Fatalf("%d records, want %d", len(recs), s.n)
	}
	size := s.rows * s.cols
	for i, r := range recs {
		d := r.datum
		if want := fmt.Sprintf("%08d", i); r.key != want {
			t.Fatalf("record %d: key %q, want %q", i, r.key, want)
		}
		if d.GetChannels() != 1 || int(d.GetHeight()) != s.rows || int(d.GetWidth()) != s.cols || d.GetEncoded() || len(d.GetFloatData()) != 0 {
			t.Fatalf("record %d: shape %dx%dx%d encoded %v, want 1x%dx%d raw bytes", i, d.GetChannels(), d.GetHeight(), d.GetWidth(), d.GetEncoded(), s.rows, s.cols)
		}
		if !bytes.Equal(d.GetData(), s.pixels[i*size:(i+1)*size]) {
			t.Fatalf("record %d: pixels differ", i)
		}
		if d.GetLabel() != int32(s.labels[i]) {
			t.Fatalf("record %d: label %d, want %d", i, d.GetLabel(), s.labels[i])
		}
	}
}

func TestConvertMNIST(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend caffepb.DataParameter_DB, name string) {
		for _, compressed := range []bool{false, true} {
			t.Run(fmt.Sprintf("gzip=%v", compressed), func(t *testing.T) {
				logs := captureLog(t)
				dir := t.TempDir()
				set := newMNISTSet(7, 28, 28)
				images, labels := set.imagesIDX(), set.labelsIDX()
				if compressed {
					images, labels = gz(t, images), gz(t, labels)
				}
				ip := writeTestFile(t, dir, "images", images)
				lp := writeTestFile(t, dir, "labels", labels)
				db := filepath.Join(dir, "db")
				code, _, stderr := runCmd("convert_mnist_data", "-backend", name, ip, lp, db)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				set.check(t, readDB(t, backend, db))
				for _, want := range []string{"A total of 7 items.", "Rows: 28 Cols: 28", "Processed 7 files."} {
					if !strings.Contains(logs.String(), want) {
						t.Errorf("log lacks %q:\n%s", want, logs)
					}
				}
			})
		}
	})
}

// TestConvertMNISTManyCommits converts more records than one transaction
// holds, with images that are not 28x28 (the header's size is used).
func TestConvertMNISTManyCommits(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend caffepb.DataParameter_DB, name string) {
		logs := captureLog(t)
		dir := t.TempDir()
		set := newMNISTSet(2500, 3, 2)
		ip := writeTestFile(t, dir, "images.gz", gz(t, set.imagesIDX()))
		lp := writeTestFile(t, dir, "labels", set.labelsIDX())
		db := filepath.Join(dir, "db")
		// Flags may follow the arguments, as with gflags.
		code, _, stderr := runCmd("convert_mnist_data", ip, lp, db, "--backend="+name)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		set.check(t, readDB(t, backend, db))
		for _, want := range []string{"Processed 1000 files.", "Processed 2000 files.", "Processed 2500 files."} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("log lacks %q", want)
			}
		}
	})
}

// TestConvertMNISTFashion converts Debian's Fashion-MNIST test set, when
// installed, and compares every record with the IDX files.
func TestConvertMNISTFashion(t *testing.T) {
	ip := filepath.Join(fashionDir, "t10k-images-idx3-ubyte.gz")
	lp := filepath.Join(fashionDir, "t10k-labels-idx1-ubyte.gz")
	if _, err := os.Stat(ip); err != nil {
		t.Skipf("dataset-fashion-mnist is not installed: %v", err)
	}
	forEachBackend(t, func(t *testing.T, backend caffepb.DataParameter_DB, name string) {
		captureLog(t)
		db := filepath.Join(t.TempDir(), "fashion_test")
		code, _, stderr := runCmd("convert_mnist_data", "-backend", name, ip, lp, db)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		recs := readDB(t, backend, db)

		images, err := data.OpenIDX(ip)
		if err != nil {
			t.Fatal(err)
		}
		defer images.Close()
		labels, err := data.OpenIDX(lp)
		if err != nil {
			t.Fatal(err)
		}
		defer labels.Close()
		if len(recs) != images.Count() || images.Count() != 10000 {
			t.Fatalf("%d records; the IDX header says %d (the t10k set has 10000)", len(recs), images.Count())
		}
		img := make([]byte, images.ItemSize())
		lab := make([]byte, 1)
		for i, r := range recs {
			if err := images.ReadItem(img); err != nil {
				t.Fatal(err)
			}
			if err := labels.ReadItem(lab); err != nil {
				t.Fatal(err)
			}
			if r.key != fmt.Sprintf("%08d", i) || r.datum.GetLabel() != int32(lab[0]) || !bytes.Equal(r.datum.GetData(), img) ||
				r.datum.GetChannels() != 1 || int(r.datum.GetHeight()) != images.Dims[1] || int(r.datum.GetWidth()) != images.Dims[2] {
				t.Fatalf("record %d (%q): label %d (IDX %d), shape %dx%dx%d, pixels equal %v",
					i, r.key, r.datum.GetLabel(), lab[0], r.datum.GetChannels(), r.datum.GetHeight(), r.datum.GetWidth(), bytes.Equal(r.datum.GetData(), img))
			}
		}
	})
}

func TestConvertMNISTErrors(t *testing.T) {
	captureLog(t)
	dir := t.TempDir()
	set := newMNISTSet(5, 4, 4)
	images := writeTestFile(t, dir, "images", set.imagesIDX())
	labels := writeTestFile(t, dir, "labels", set.labelsIDX())
	short := newMNISTSet(4, 4, 4)
	labels4 := writeTestFile(t, dir, "labels4", short.labelsIDX())
	full := set.imagesIDX()
	truncated := writeTestFile(t, dir, "truncated", full[:len(full)-5])
	truncatedGz := writeTestFile(t, dir, "truncated.gz", gz(t, full[:len(full)-5]))
	html := writeTestFile(t, dir, "page.html", []byte("<html>404 Not Found</html>"))
	existing := filepath.Join(dir, "existing")
	os.Mkdir(existing, 0o755)
	missing := filepath.Join(dir, "missing")

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		want   []string
		noDB   bool // the database must not be left behind
		dbPath string
	}{
		{"missing images", []string{missing, labels}, 1, []string{"images file", missing, "no such file"}, true, ""},
		{"missing labels", []string{images, missing}, 1, []string{"labels file", missing}, true, ""},
		{"swapped", []string{labels, images}, 1, []string{"images file " + labels, "incorrect magic number 2049", "swapped", "want 2051"}, true, ""},
		{"labels magic", []string{images, images}, 1, []string{"labels file " + images, "incorrect magic number 2051", "want 2049"}, true, ""},
		{"not IDX", []string{html, labels}, 1, []string{html, "not an IDX file"}, true, ""},
		{"count mismatch", []string{images, labels4}, 1, []string{"holds 5 items", "holds 4", labels4}, true, ""},
		{"truncated", []string{truncated, labels}, 1, []string{truncated, "truncated", "5 items of 16 bytes"}, true, ""},
		{"truncated gzip", []string{truncatedGz, labels}, 1, []string{truncatedGz, "truncated", "item 4 of 5 ends after 11 of its 16 bytes"}, true, ""},
		{"existing db", []string{images, labels}, 1, []string{existing, "already exists"}, false, existing},
		{"too few args", []string{images}, 2, []string{"usage: gocaffe convert_mnist_data", "want 3 arguments"}, true, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.dbPath
			if db == "" {
				db = filepath.Join(t.TempDir(), "db")
			}
			args := append([]string{"convert_mnist_data", "-backend", "leveldb"}, tc.args...)
			if db != "-" {
				args = append(args, db)
			}
			code, _, stderr := runCmd(args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tc.noDB && db != "-" {
				if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("database %s left behind (%v)", db, err)
				}
			}
		})
	}
	if code, _, stderr := runCmd("convert_mnist_data", "-backend", "bdb", images, labels, filepath.Join(dir, "x")); code != 1 || !strings.Contains(stderr, `unknown database backend "bdb"`) {
		t.Errorf("unknown backend: exit %d, %s", code, stderr)
	}
}

// TestConvertedMNISTFeedsDataLayer: a database written by convert_mnist_data
// is read back by a net's Data layer, scaled as LeNet scales it, in key
// order and wrapping around after the last record.
func TestConvertedMNISTFeedsDataLayer(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend caffepb.DataParameter_DB, name string) {
		dir := t.TempDir()
		set := newMNISTSet(5, 4, 3)
		ip := writeTestFile(t, dir, "images", set.imagesIDX())
		lp := writeTestFile(t, dir, "labels", set.labelsIDX())
		db := filepath.Join(dir, "db")
		if code, _, stderr := runCmd("convert_mnist_data", "-backend", name, ip, lp, db); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		np := &caffepb.NetParameter{}
		text := fmt.Sprintf(`layer { name: "mnist" type: "Data" top: "data" top: "label"
			transform_param { scale: 0.00390625 }
			data_param { source: %q backend: %v batch_size: 2 } }`, db, backend)
		if err := prototext.Unmarshal([]byte(text), np); err != nil {
			t.Fatal(err)
		}
		n, err := net.New[float32](np, net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum()}})
		if err != nil {
			t.Fatal(err)
		}
		defer n.Close()
		size := set.rows * set.cols
		for b, items := range [][]int{{0, 1}, {2, 3}, {4, 0}} {
			if _, err := n.Forward(); err != nil {
				t.Fatal(err)
			}
			pix, labels := n.BlobByName("data").CPUData(), n.BlobByName("label").CPUData()
			for k, i := range items {
				if labels[k] != float32(set.labels[i]) {
					t.Fatalf("batch %d item %d: label %v, want %d (record %d)", b, k, labels[k], set.labels[i], i)
				}
				for j := range size {
					if want := float32(set.pixels[i*size+j]) * 0.00390625; pix[k*size+j] != want {
						t.Fatalf("batch %d item %d pixel %d = %v, want %v (record %d)", b, k, j, pix[k*size+j], want, i)
					}
				}
			}
		}
	})
}
