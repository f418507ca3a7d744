package hdf5

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/internal/h5pytest"
)

// appendRows returns rows from..to of the test datasets: data rows of 2x3
// float32 (10 r + k), label rows of one float64 (r / 2).
func appendRows(from, to int) ([]float32, []float64) {
	var data []float32
	var label []float64
	for r := from; r < to; r++ {
		for k := range 6 {
			data = append(data, float32(10*r+k))
		}
		label = append(label, float64(r)/2)
	}
	return data, label
}

// readBack reads a dataset of an Appender's file with this package's
// reader.
func readBack[T float32 | float64](t *testing.T, path, name string) ([]T, []int) {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.OpenDataset(name)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]T, d.Count())
	if err := ReadFloats(d, out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out, d.Shape()
}

// An Appender's datasets read back, by this package and by h5py (libhdf5),
// after every call: rows written in calls of uneven sizes across chunks
// of one row (data) and of three (label), 5000 rows in all, so that the
// data's chunk B-tree has three levels (79 leaves under 2 nodes under the
// root) and grows through each shape on the way. The file grows by the
// rows and a little metadata, not by rewriting itself.
func TestAppenderGrowsReadableFiles(t *testing.T) {
	old := minChunkBytes
	minChunkBytes = 0
	defer func() { minChunkBytes = old }()
	dir := t.TempDir()
	path := filepath.Join(dir, "grow.h5")
	a, err := CreateAppender(path, []GrowingDataset{{Name: "data", RowShape: []int{2, 3}, ChunkRows: 1}, {Name: "label", RowShape: []int{1}, Float64: true, ChunkRows: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.sets[0].chunkRows != 1 || a.sets[1].chunkRows != 3 {
		t.Fatalf("chunks of %d and %d rows", a.sets[0].chunkRows, a.sets[1].chunkRows)
	}
	info, _ := os.Stat(path)
	rows, pass := 0, 0
	for rows < 5000 {
		n := min(1+pass*7%23, 5000-rows)
		data, label := appendRows(rows, rows+n)
		if err := AppendFloats(a, data); err != nil {
			t.Fatal(err)
		}
		if err := AppendFloats(a, nil, label); err != nil {
			t.Fatal(err)
		}
		rows += n
		pass++
		if pass < 30 || pass%50 == 0 || rows == 5000 || (rows > 64 && rows-n <= 64) || (rows > 4096 && rows-n <= 4096) {
			gotData, shape := readBack[float32](t, path, "data")
			gotLabel, lshape := readBack[float64](t, path, "label")
			wantData, wantLabel := appendRows(0, rows)
			if !slices.Equal(shape, []int{rows, 2, 3}) || !slices.Equal(lshape, []int{rows, 1}) || !slices.Equal(gotData, wantData) || !slices.Equal(gotLabel, wantLabel) {
				t.Fatalf("after %d rows in %d calls: shapes %v %v, data or labels differ", rows, pass, shape, lshape)
			}
			// A copy for h5py, below.
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("grow_%d.h5", rows)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if levels := len(a.sets[0].levels); levels != 3 {
		t.Errorf("the data's B-tree has %d levels, want 3", levels)
	}
	if now, _ := os.Stat(path); !os.SameFile(info, now) {
		t.Error("the file was replaced rather than appended to")
	}
	out := h5pytest.Run(t, dir, `
import h5py, numpy as np
f = h5py.File('grow.h5', 'r')
d, l = f['data'], f['label']
assert d.dtype == np.float32 and d.shape == (5000, 2, 3) and d.maxshape == (None, 2, 3) and d.chunks == (1, 2, 3), (d.dtype, d.shape, d.maxshape, d.chunks)
assert l.dtype == np.float64 and l.shape == (5000, 1) and l.chunks == (3, 1), (l.dtype, l.shape, l.chunks)
r = np.arange(5000)
assert (d[()] == (10 * r[:, None, None] + np.arange(6).reshape(2, 3)).astype(np.float32)).all()
assert (l[:, 0] == r / 2).all()
assert d[4097, 1, 2] == 40975 and l[4999, 0] == 2499.5
import glob
copies = glob.glob('grow_*.h5')
assert len(copies) > 30, len(copies)
for name in copies:
    with h5py.File(name, 'r') as c:
        n = int(name[5:-3])
        assert c['data'].shape == (n, 2, 3) and c['label'].shape == (n, 1), name
        assert (c['data'][()] == (10 * r[:n, None, None] + np.arange(6).reshape(2, 3)).astype(np.float32)).all(), name
        assert (c['label'][:, 0] == r[:n] / 2).all(), name
print('ok')
`)
	if strings.TrimSpace(out) != "ok" {
		t.Fatalf("h5py: %s", out)
	}
	if h5dump, err := exec.LookPath("h5dump"); err == nil {
		if out, err := exec.Command(h5dump, "-d", "/data", "-s", "4999,1,2", "-c", "1,1,1", path).CombinedOutput(); err != nil || !strings.Contains(string(out), "49995") {
			t.Errorf("h5dump: %v\n%s", err, out)
		}
	}
}

// Chunks hold 16 KiB to 1 MiB where rows allow: a batch of small rows is
// made up to 16 KiB, a huge one cut to 1 MiB, a row over 1 MiB is a chunk
// alone; rows of no elements or over 4 GiB are refused.
func TestAppenderChunkRows(t *testing.T) {
	for _, c := range []struct {
		d    GrowingDataset
		want int
	}{
		{GrowingDataset{RowShape: []int{1}, ChunkRows: 64}, 4096},
		{GrowingDataset{RowShape: []int{8, 5, 5}, ChunkRows: 64}, 64},
		{GrowingDataset{RowShape: []int{8, 5, 5}, Float64: true, ChunkRows: 10000}, 655},
		{GrowingDataset{RowShape: []int{3, 1000, 1000}, ChunkRows: 16}, 1},
	} {
		g, err := newGrowing(c.d)
		if err != nil || g.chunkRows != c.want {
			t.Errorf("%+v: %d rows a chunk (%v), want %d", c.d, g.chunkRows, err, c.want)
		}
	}
	for _, shape := range [][]int{{0}, {3, 0}, {1 << 16, 1 << 16}} {
		if _, err := newGrowing(GrowingDataset{RowShape: shape, ChunkRows: 1}); err == nil {
			t.Errorf("rows of %v accepted", shape)
		}
	}
}

// Rows that are not whole, of the other float type, or for datasets the
// file lacks are refused before anything is written.
func TestAppenderRefusesBadRows(t *testing.T) {
	a, err := CreateAppender(filepath.Join(t.TempDir(), "bad.h5"), []GrowingDataset{{Name: "data", RowShape: []int{2}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for name, err := range map[string]error{
		"half a row":  AppendFloats(a, []float32{1, 2, 3}),
		"float64":     AppendFloats(a, []float64{1, 2}),
		"two columns": AppendFloats(a, []float32{1, 2}, []float32{3, 4}),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := AppendFloats(a, []float32{1, 2}); err != nil || a.Rows(0) != 1 {
		t.Errorf("a good row after refused ones: %v, %d rows", err, a.Rows(0))
	}
	if _, err := CreateAppender(filepath.Join(t.TempDir(), "dup.h5"), []GrowingDataset{{Name: "x", RowShape: []int{1}}, {Name: "x", RowShape: []int{1}}}); err == nil {
		t.Error("two datasets of one name accepted")
	}
}

// BenchmarkAppender appends passes of 1 MB (HDF5Output's case of the
// issue: 200 such passes took 257 s and 3.8 GB when every pass rewrote the
// file): time and memory per pass stay flat however many came before.
func BenchmarkAppender(b *testing.B) {
	a, err := CreateAppender(filepath.Join(b.TempDir(), "bench.h5"), []GrowingDataset{{Name: "data", RowShape: []int{64, 64}, ChunkRows: 64}, {Name: "label", RowShape: []int{1}, ChunkRows: 64}})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	data, label := make([]float32, 64*64*64), make([]float32, 64)
	b.SetBytes(int64(4 * (len(data) + len(label))))
	b.ReportAllocs()
	for b.Loop() {
		if err := AppendFloats(a, data, label); err != nil {
			b.Fatal(err)
		}
	}
}
