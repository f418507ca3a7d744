package datalayer_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/hdf5"
	"github.com/gocaffe/gocaffe/internal/h5pytest"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// writeHDF5Set writes two files with h5py: rows 0-9 (contiguous float32
// data, float64 labels) and rows 10-19 (gzip-chunked data, int32 labels);
// data row r holds 100*r + k.
func writeHDF5Set(t *testing.T, dir string) string {
	t.Helper()
	h5pytest.Run(t, dir, `
import h5py, numpy as np
def rows(a, b):
    return (100 * np.arange(a, b)[:, None] + np.arange(12)[None, :]).reshape(-1, 2, 3, 2)
with h5py.File('one.h5', 'w') as f:
    f['data'] = rows(0, 10).astype(np.float32)
    f['label'] = np.arange(0, 10, dtype=np.float64)[:, None]
with h5py.File('two.h5', 'w') as f:
    f.create_dataset('data', data=rows(10, 20).astype(np.float32), chunks=(3, 2, 3, 2), compression='gzip')
    f['label'] = np.arange(10, 20, dtype=np.int32)[:, None]
with h5py.File('short.h5', 'w') as f:
    f['data'] = rows(0, 4).astype(np.float32)
    f['label'] = np.arange(3, dtype=np.float32)
with h5py.File('strings.h5', 'w') as f:
    f['data'] = rows(0, 4).astype(np.float32)
    f['label'] = np.array([b'a', b'b', b'c', b'd'])
with h5py.File('nolabel.h5', 'w') as f:
    f['data'] = rows(0, 4).astype(np.float32)
`)
	list := filepath.Join(dir, "list.txt")
	os.WriteFile(list, []byte("one.h5\n  two.h5\n"), 0o644)
	return list
}

func hdf5DataLayer(t *testing.T, source string, batch int, extra string) (layer.Layer[float64], []*blob.Blob[float64]) {
	t.Helper()
	l := layertest.New[float64](t, `type: "HDF5Data" top: "data" top: "label" hdf5_data_param { source: "`+source+`" batch_size: `+strconv.Itoa(batch)+` `+extra+` }`)
	top := layertest.Blobs[float64](t, 2)
	layertest.SetUp(t, l, nil, top)
	return l, top
}

// Caffe's HDF5DataLayerTest.TestRead: batches walk the rows of the first
// file, then the second, then wrap; every top is its dataset.
func TestHDF5DataRead(t *testing.T) {
	dir := t.TempDir()
	list := writeHDF5Set(t, dir)
	l, top := hdf5DataLayer(t, list, 3, "")
	if !slices.Equal(top[0].Shape(), []int{3, 2, 3, 2}) || !slices.Equal(top[1].Shape(), []int{3, 1}) {
		t.Fatalf("top shapes %v %v", top[0].Shape(), top[1].Shape())
	}
	row := 0
	for range 20 { // three passes over the 20 rows
		layertest.Forward(t, l, nil, top)
		for i := range 3 {
			r := row % 20
			if got := top[1].CPUData()[i]; got != float64(r) {
				t.Fatalf("row %d: label %v, want %v", row, got, r)
			}
			for k := range 12 {
				if got := top[0].CPUData()[i*12+k]; got != float64(100*r+k) {
					t.Fatalf("row %d: data[%d] = %v, want %v", row, k, got, 100*r+k)
				}
			}
			row++
		}
	}
}

// With shuffle every pass over a file serves each of its rows once, in an
// order that is not always the stored one.
func TestHDF5DataShuffle(t *testing.T) {
	dir := t.TempDir()
	list := writeHDF5Set(t, dir)
	l, top := hdf5DataLayer(t, list, 5, "shuffle: true")
	l.LayerBase().Reseed(7)
	ordered := true
	for range 8 { // four passes over both files
		var labels []int
		for range 2 {
			layertest.Forward(t, l, nil, top)
			for _, v := range top[1].CPUData() {
				labels = append(labels, int(v))
			}
		}
		sorted := slices.Sorted(slices.Values(labels))
		if first := sorted[0]; first != 0 && first != 10 || sorted[9] != first+9 || len(slices.Compact(sorted)) != 10 {
			t.Fatalf("a pass over one file served %v", labels)
		}
		ordered = ordered && slices.Equal(labels, sorted)
	}
	if ordered {
		t.Error("shuffle never changed the order")
	}
}

func TestHDF5DataErrors(t *testing.T) {
	dir := t.TempDir()
	writeHDF5Set(t, dir)
	for file, want := range map[string][]string{
		"short.h5":   {"short.h5", "dataset /label has 3 rows", "/data has 4"},
		"strings.h5": {"strings.h5", "dataset /label", "H5T_STRING"},
		"nolabel.h5": {"nolabel.h5", "/label not found"},
		"absent.h5":  {"absent.h5"},
	} {
		list := filepath.Join(dir, file+".txt")
		os.WriteFile(list, []byte(filepath.Join(dir, file)), 0o644)
		l := layertest.New[float32](t, `type: "HDF5Data" top: "data" top: "label" hdf5_data_param { source: "`+list+`" batch_size: 2 }`)
		err := layer.SetUp(l, nil, layertest.Blobs[float32](t, 2))
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: err = %v, want it to contain %q", file, err, w)
			}
		}
	}
	if _, err := layer.New[float32](layertest.Param(t, `type: "HDF5Data" top: "data" transform_param { scale: 2 } hdf5_data_param { source: "x" batch_size: 2 }`)); err == nil || !strings.Contains(err.Error(), "does not transform data") {
		t.Errorf("transform_param: %v", err)
	}
}

// Caffe's HDF5OutputLayerTest.TestForward: what it writes reads back equal
// (by h5py and by us); a second pass appends its rows.
func TestHDF5Output(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.h5")
	l := layertest.New[float32](t, `type: "HDF5Output" bottom: "data" bottom: "label" hdf5_output_param { file_name: "`+out+`" }`)
	data, label := layertest.Blob[float32](t, 5, 8, 5, 5), layertest.Blob[float32](t, 5, 1)
	layertest.FillGaussian(data, 0, 1, 1)
	layertest.FillUniform(label, 0, 10, 2)
	bottom := []*blob.Blob[float32]{data, label}
	layertest.SetUp(t, l, bottom, nil)
	layertest.Forward(t, l, bottom, nil)
	f, err := hdf5.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]*blob.Blob[float32]{"data": data, "label": label} {
		d, err := f.OpenDataset(name)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float32, d.Count())
		if err := hdf5.ReadFloats(d, got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, b.CPUData()) || !slices.Equal(d.Shape(), []int{5, b.Shape()[1], legacy(b, 2), legacy(b, 3)}) {
			t.Errorf("%s: shape %v", name, d.Shape())
		}
	}
	f.Close()
	layertest.Forward(t, l, bottom, nil)
	res := h5pytest.Run(t, dir, `
import h5py
f = h5py.File('out.h5', 'r')
print(f['data'].shape, f['label'].shape, f['data'][7, 3, 2, 1])
`)
	want := fmt.Sprintf("(10, 8, 5, 5) (10, 1, 1, 1) %v", data.CPUData()[2*200+3*25+2*5+1])
	if strings.TrimSpace(res) != want {
		t.Errorf("h5py reads %q, want %q", strings.TrimSpace(res), want)
	}
}

func legacy(b *blob.Blob[float32], i int) int {
	if i < b.NumAxes() {
		return b.Shape()[i]
	}
	return 1
}

// HDF5Output appends each pass to the file in place: the file is never
// replaced, and the memory a pass allocates does not grow with the passes
// before it (every pass rewrote the whole file from rows kept in memory:
// 200 passes of 1 MB took 257 s and 3.8 GB). Close flushes it; h5py and
// our reader read every row.
func TestHDF5OutputAppendsInPlace(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "passes.h5")
	l := layertest.New[float32](t, `type: "HDF5Output" bottom: "data" bottom: "label" hdf5_output_param { file_name: "`+out+`" }`)
	data, label := layertest.Blob[float32](t, 16, 8, 16, 16), layertest.Blob[float32](t, 16)
	bottom := []*blob.Blob[float32]{data, label}
	layertest.SetUp(t, l, bottom, nil)
	pass := func(i int) {
		for j := range label.MutableCPUData() {
			label.MutableCPUData()[j] = float32(16*i + j)
		}
		data.MutableCPUData()[0] = float32(i)
		layertest.Forward(t, l, bottom, nil)
	}
	pass(0)
	first, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 50; i++ {
		pass(i)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 50; i < 60; i++ {
		pass(i)
	}
	runtime.ReadMemStats(&after)
	// Ten passes may allocate a little each (metadata, log lines), not the
	// 50 passes before them (tens of MB when they were rewritten).
	passBytes := 4 * (data.Count() + label.Count())
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 4*uint64(passBytes) {
		t.Errorf("passes 50 to 59 allocated %d bytes, more than four passes' %d: the layer holds or rewrites earlier passes", grown, 4*passBytes)
	}
	if now, _ := os.Stat(out); !os.SameFile(first, now) {
		t.Error("the file was replaced, not appended to")
	}
	if err := l.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	f, err := hdf5.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.OpenDataset("label")
	if err != nil {
		t.Fatal(err)
	}
	labels := make([]float32, d.Count())
	if err := hdf5.ReadFloats(d, labels); err != nil {
		t.Fatal(err)
	}
	for i, v := range labels {
		if v != float32(i) {
			t.Fatalf("label row %d = %v (of %d rows)", i, v, len(labels))
		}
	}
	res := h5pytest.Run(t, dir, `
import h5py, numpy as np
f = h5py.File('passes.h5', 'r')
print(f['data'].shape, f['label'].shape, (f['label'][:, 0, 0, 0] == np.arange(960)).all(), f['data'][16 * 59, 0, 0, 0])
`)
	if want := "(960, 8, 16, 16) (960, 1, 1, 1) True 59.0"; strings.TrimSpace(res) != want {
		t.Errorf("h5py reads %q, want %q", strings.TrimSpace(res), want)
	}
}
