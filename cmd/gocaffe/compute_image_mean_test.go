package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// writeDatums fills a new database with the datums, keyed in order.
func writeDatums(t *testing.T, backend caffepb.DataParameter_DB, path string, datums ...*caffepb.Datum) {
	t.Helper()
	db, err := data.Open(backend, path, data.New)
	if err != nil {
		t.Fatal(err)
	}
	txn, err := db.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range datums {
		v, err := proto.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := txn.Put(fmt.Appendf(nil, "%08d", i), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func rawDatum(c, h, w int32, px ...byte) *caffepb.Datum {
	return &caffepb.Datum{Channels: proto.Int32(c), Height: proto.Int32(h), Width: proto.Int32(w), Data: px}
}

func TestComputeImageMean(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend caffepb.DataParameter_DB, name string) {
		logs := captureLog(t)
		dir := t.TempDir()
		db := filepath.Join(dir, "db")
		// Three 2x1x2 datums: two of bytes, one of float_data.
		writeDatums(t, backend, db,
			rawDatum(2, 1, 2, 0, 10, 20, 30),
			rawDatum(2, 1, 2, 3, 11, 22, 33),
			&caffepb.Datum{Channels: proto.Int32(2), Height: proto.Int32(1), Width: proto.Int32(2), FloatData: []float32{0.5, 0, 200, 1}},
		)
		// By hand: (0+3+0.5)/3, (10+11+0)/3, (20+22+200)/3, (30+33+1)/3.
		want := []float32{3.5 / 3, 7, 242.0 / 3, 64.0 / 3}
		meanFile := filepath.Join(dir, "mean.binaryproto")
		code, _, stderr := runCmd("compute_image_mean", "-backend", name, db, meanFile)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var mean caffepb.BlobProto
		if err := protoio.ReadProtoFromBinaryFile(meanFile, &mean); err != nil {
			t.Fatal(err)
		}
		// Caffe's tool writes the legacy shape fields.
		if mean.GetNum() != 1 || mean.GetChannels() != 2 || mean.GetHeight() != 1 || mean.GetWidth() != 2 || mean.Shape != nil {
			t.Errorf("mean shape: num %d channels %d height %d width %d shape %v", mean.GetNum(), mean.GetChannels(), mean.GetHeight(), mean.GetWidth(), mean.Shape)
		}
		if len(mean.Data) != len(want) {
			t.Fatalf("mean %v, want %v", mean.Data, want)
		}
		for i := range want {
			if math.Abs(float64(mean.Data[i]-want[i])) > 1e-5 {
				t.Errorf("mean[%d] = %v, want %v", i, mean.Data[i], want[i])
			}
		}
		// It loads as a 1x2x1x2 blob, as a Data layer's mean_file.
		b, err := blob.New[float32](1)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.FromProto(&mean, true); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(b.Shape()); got != "[1 2 1 2]" {
			t.Errorf("blob shape %s", got)
		}
		// Channel means: (3.5/3 + 7)/2 = 4.08333, (242/3 + 64/3)/2 = 51.
		for _, w := range []string{"Number of channels: 2", "mean_value channel [0]:4.08333", "mean_value channel [1]:51", "Processed 3 files.", "Write to " + meanFile} {
			if !strings.Contains(logs.String(), w) {
				t.Errorf("log lacks %q:\n%s", w, logs)
			}
		}

		// Without an output file it only logs.
		logs.Reset()
		if code, _, stderr := runCmd("compute_image_mean", db, "-backend", name); code != 0 || !strings.Contains(logs.String(), "mean_value channel [1]:51") {
			t.Errorf("exit %d: %s\n%s", code, stderr, logs)
		}
	})
}

// TestComputeImageMeanEncoded averages a database of encoded images,
// which are decoded first, and compares with the mean of their pixels.
func TestComputeImageMeanEncoded(t *testing.T) {
	logs := captureLog(t)
	a, b := testImage(3, 2, 0), testImage(3, 2, 50)
	tree := newImageTree(t, map[string][]byte{"a.png": encodePNG(t, a), "b.png": encodePNG(t, b)}, "a.png 0\nb.png 1\n")
	db, _ := convertImages(t, tree, "leveldb", "-encoded")
	meanFile := filepath.Join(t.TempDir(), "mean.binaryproto")
	if code, _, stderr := runCmd("compute_image_mean", "-backend", "leveldb", db, meanFile); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var mean caffepb.BlobProto
	if err := protoio.ReadProtoFromBinaryFile(meanFile, &mean); err != nil {
		t.Fatal(err)
	}
	pa, pb := bgrPlanes(a), bgrPlanes(b)
	if mean.GetChannels() != 3 || mean.GetHeight() != 2 || mean.GetWidth() != 3 || len(mean.Data) != len(pa) {
		t.Fatalf("mean %dx%dx%d with %d values", mean.GetChannels(), mean.GetHeight(), mean.GetWidth(), len(mean.Data))
	}
	for i := range pa {
		if want := (float32(pa[i]) + float32(pb[i])) / 2; mean.Data[i] != want {
			t.Errorf("mean[%d] = %v, want %v", i, mean.Data[i], want)
		}
	}
	if !strings.Contains(logs.String(), "Decoding Datum") || !strings.Contains(logs.String(), "Number of channels: 3") {
		t.Errorf("log:\n%s", logs)
	}
}

func TestComputeImageMeanErrors(t *testing.T) {
	captureLog(t)
	dir := t.TempDir()
	mixed := filepath.Join(dir, "mixed")
	writeDatums(t, caffepb.DataParameter_LEVELDB, mixed, rawDatum(1, 2, 2, 1, 2, 3, 4), rawDatum(1, 1, 4, 1, 2, 3, 4))
	empty := filepath.Join(dir, "empty")
	writeDatums(t, caffepb.DataParameter_LEVELDB, empty)
	short := filepath.Join(dir, "short")
	writeDatums(t, caffepb.DataParameter_LEVELDB, short, rawDatum(1, 2, 2, 1, 2, 3))
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{filepath.Join(dir, "nodb")}, 1, []string{filepath.Join(dir, "nodb")}},
		{[]string{empty}, 1, []string{empty, "is empty"}},
		{[]string{mixed}, 1, []string{`record "00000001"`, "1x1x4", `the first, "00000000", is 1x2x2`}},
		{[]string{short}, 1, []string{`record "00000000"`, "holds 3 bytes, want 4"}},
		{nil, 2, []string{"want 1 or 2 arguments"}},
		{[]string{"a", "b", "c"}, 2, []string{"want 1 or 2 arguments"}},
	} {
		args := append([]string{"compute_image_mean", "-backend", "leveldb"}, tc.args...)
		code, _, stderr := runCmd(args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d: %s", tc.args, code, tc.code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %q: %s", tc.args, w, stderr)
			}
		}
	}
}
