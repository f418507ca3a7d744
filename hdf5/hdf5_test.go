package hdf5_test

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/hdf5"
	"github.com/gocaffe/gocaffe/internal/h5pytest"
)

func readAll[T float32 | float64](t *testing.T, f *hdf5.File, path string) ([]T, []int) {
	t.Helper()
	d, err := f.OpenDataset(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]T, d.Count())
	if err := hdf5.ReadFloats(d, out); err != nil {
		t.Fatal(err)
	}
	return out, d.Shape()
}

func arange(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i)
	}
	return out
}

// Files written by h5py, in every storage form it writes.
func TestReadH5py(t *testing.T) {
	dir := t.TempDir()
	h5pytest.Run(t, dir, `
import h5py, numpy as np
a = np.arange(7*9*5).reshape(7, 9, 5)
for libver in ['earliest', 'latest']:
    with h5py.File(libver + '.h5', 'w', libver=libver) as f:
        # libver 'latest' stores groups of more than 8 links densely
        p, q = f.create_group('p'), f.create_group('q')
        p['f32'] = a.astype(np.float32)
        p['f64'] = a.astype(np.float64) / 4
        p['i64'] = -a
        p['u8'] = (a % 256).astype(np.uint8)
        p['i16be'] = a.astype('>i2')
        p['f32be'] = a.astype('>f4')
        q.create_dataset('gzip', data=a.astype(np.float32), chunks=(3, 4, 2), compression='gzip')
        q.create_dataset('shuffle', data=a.astype(np.float64), chunks=(2, 9, 5), compression='gzip', shuffle=True, fletcher32=True)
        q.create_dataset('chunked', data=a.astype(np.int32), chunks=(7, 9, 5))
        q.create_dataset('single', data=a.astype(np.float32), chunks=(7, 9, 5), compression='gzip')
        p['compact'] = np.arange(3, dtype=np.float32)
        q['scalar'] = np.float64(2.5)
        q['str'] = np.bytes_('weights.caffemodel.h5')
        g = f.create_group('data').create_group('conv1')
        g['0'] = np.ones((2, 3), np.float32)
        g['1'] = np.zeros(2, np.float32)
        big = f.create_group('many')
        for i in range(300):
            big['m%03d' % i] = np.array([i], np.float32)
        ordered = f.create_group('ordered', track_order=True)
        for i in reversed(range(20)):
            ordered['o%02d' % i] = np.array([i], np.float32)
`)
	for _, name := range []string{"earliest.h5", "latest.h5"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			if !hdf5.IsHDF5(path) {
				t.Fatal("IsHDF5 is false")
			}
			f, err := hdf5.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want := arange(7 * 9 * 5)
			for _, ds := range []string{"p/f32", "p/u8", "p/i16be", "p/f32be", "q/gzip", "q/shuffle", "q/chunked", "q/single", "p/f64", "p/i64"} {
				got, shape := readAll[float64](t, f, ds)
				if !slices.Equal(shape, []int{7, 9, 5}) {
					t.Errorf("%s: shape %v", ds, shape)
				}
				for i, v := range got {
					w := want[i]
					switch ds {
					case "p/u8":
						w = float64(int(w) % 256)
					case "p/f64":
						w /= 4
					case "p/i64":
						w = -w
					}
					if v != w {
						t.Fatalf("%s[%d] = %v, want %v", ds, i, v, w)
					}
				}
			}
			if got, _ := readAll[float32](t, f, "/p/compact"); !slices.Equal(got, []float32{0, 1, 2}) {
				t.Errorf("compact %v", got)
			}
			if got, shape := readAll[float32](t, f, "q/scalar"); len(shape) != 0 || got[0] != 2.5 {
				t.Errorf("scalar %v shape %v", got, shape)
			}
			d, err := f.OpenDataset("q/str")
			if err != nil {
				t.Fatal(err)
			}
			if s, err := d.ReadString(); err != nil || s != "weights.caffemodel.h5" {
				t.Errorf("string %q, %v", s, err)
			}
			g, err := f.OpenGroup("/data/conv1")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(g.Names(), []string{"0", "1"}) {
				t.Errorf("conv1 members %v", g.Names())
			}
			if got, shape := readAll[float32](t, f, "data/conv1/0"); !slices.Equal(shape, []int{2, 3}) || got[5] != 1 {
				t.Errorf("data/conv1/0: %v %v", got, shape)
			}
			ordered, err := f.OpenGroup("ordered")
			if err != nil {
				t.Fatal(err)
			}
			for i, n := range ordered.Names() {
				if v, _ := readAll[float32](t, f, "ordered/"+n); n != sprintf("o%02d", i) || v[0] != float32(i) {
					t.Fatalf("ordered: member %d is %s = %v", i, n, v)
				}
			}
			many, err := f.OpenGroup("many")
			if err != nil {
				t.Fatal(err)
			}
			for i, n := range many.Names() {
				v, _ := readAll[float32](t, f, "many/"+n)
				if n != sprintf("m%03d", i) || v[0] != float32(i) {
					t.Fatalf("many: member %d is %s = %v", i, n, v)
				}
			}
		})
	}
}

// What the Builder writes, h5py reads (and h5dump accepts), including
// groups large enough for several B-tree levels.
func TestWriteReadByH5py(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ours.h5")
	b := hdf5.NewBuilder()
	root := b.Root()
	data, _ := root.CreateGroup("data")
	for i := range 700 {
		if err := hdf5.CreateFloats(data, sprintf("layer%03d", i), []int{2, 3}, []float32{float32(i), 1, 2, 3, 4, 5}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := root.CreateGroup("empty"); err != nil {
		t.Fatal(err)
	}
	if err := hdf5.CreateFloats(root, "f64", []int{2, 2, 2}, []float64{0.5, 1, 2, 3, 4, 5, 6, -7.25}); err != nil {
		t.Fatal(err)
	}
	if err := hdf5.CreateFloats(root, "scalar", nil, []float32{3}); err != nil {
		t.Fatal(err)
	}
	if err := hdf5.CreateFloats(root, "empty_ds", []int{0, 4}, []float32{}); err != nil {
		t.Fatal(err)
	}
	if err := root.CreateInt32s("iter", []int{1}, []int32{-1234}); err != nil {
		t.Fatal(err)
	}
	if err := root.CreateString("learned_net", "x_iter_10.caffemodel.h5"); err != nil {
		t.Fatal(err)
	}
	if err := root.CreateString("learned_net", "again"); err == nil {
		t.Error("a duplicate name was accepted")
	}
	if err := hdf5.CreateFloats(root, "bad", []int{3}, []float32{1}); err == nil {
		t.Error("a count mismatch was accepted")
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := h5pytest.Run(t, dir, `
import h5py, numpy as np
f = h5py.File('ours.h5', 'r')
d = f['data']
assert len(d) == 700, len(d)
for i in range(700):
    v = d['layer%03d' % i]
    assert v.dtype == np.float32 and v.shape == (2, 3), (v.dtype, v.shape)
    assert list(v[()].ravel()) == [i, 1, 2, 3, 4, 5]
assert list(d.keys())[:2] == ['layer000', 'layer001']
assert len(f['empty']) == 0
assert f['f64'].dtype == np.float64 and f['f64'][1, 1, 1] == -7.25
assert f['scalar'].shape == () and f['scalar'][()] == 3
assert f['empty_ds'].shape == (0, 4)
assert f['iter'].dtype == np.int32 and f['iter'][0] == -1234
assert f['learned_net'][()] == b'x_iter_10.caffemodel.h5'
print('ok')
`)
	if strings.TrimSpace(out) != "ok" {
		t.Fatalf("h5py: %s", out)
	}
	if h5dump, err := exec.LookPath("h5dump"); err == nil {
		if out, err := exec.Command(h5dump, "-H", path).CombinedOutput(); err != nil {
			t.Fatalf("h5dump: %v\n%s", err, out)
		}
	}
	// And we read it back.
	f, err := hdf5.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := f.OpenGroup("data")
	if err != nil || len(g.Names()) != 700 {
		t.Fatalf("data: %v, %v", g, err)
	}
	got, _ := readAll[float64](t, f, "data/layer699")
	if got[0] != 699 {
		t.Errorf("layer699 = %v", got)
	}
	it, _ := readAll[float64](t, f, "iter")
	if it[0] != -1234 {
		t.Errorf("iter = %v", it)
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	h5pytest.Run(t, dir, `
import h5py, numpy as np
with h5py.File('bad.h5', 'w') as f:
    f['compound'] = np.zeros(3, dtype=[('a', 'f4'), ('b', 'i4')])
    f['str'] = np.bytes_('x')
    f.create_group('g')
`)
	path := filepath.Join(dir, "bad.h5")
	f, err := hdf5.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.OpenDataset("missing"); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "/missing not found") {
		t.Errorf("missing: %v", err)
	}
	if _, err := f.OpenDataset("compound"); err == nil || !strings.Contains(err.Error(), "dataset /compound") || !strings.Contains(err.Error(), "H5T_COMPOUND") {
		t.Errorf("compound: %v", err)
	}
	d, err := f.OpenDataset("str")
	if err != nil {
		t.Fatal(err)
	}
	if err := hdf5.ReadFloats(d, make([]float32, 1)); err == nil || !strings.Contains(err.Error(), "H5T_STRING") {
		t.Errorf("string as floats: %v", err)
	}
	if _, err := f.OpenDataset("g"); err == nil || !strings.Contains(err.Error(), "is a group") {
		t.Errorf("group as dataset: %v", err)
	}
	notH5 := filepath.Join(dir, "x.h5")
	os.WriteFile(notH5, []byte("hello"), 0o644)
	if _, err := hdf5.Open(notH5); err == nil || !strings.Contains(err.Error(), "not an HDF5 file") {
		t.Errorf("not HDF5: %v", err)
	}
	// A truncated file fails with an error, not a panic.
	whole, _ := os.ReadFile(path)
	for _, n := range []int{100, 800} {
		os.WriteFile(notH5, whole[:n], 0o644)
		if f, err := hdf5.Open(notH5); err == nil {
			if _, err := f.OpenDataset("str"); err == nil {
				t.Errorf("truncated at %d: no error", n)
			}
			f.Close()
		}
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// Damaged files give errors, never panics: every byte of an h5py file
// (with groups, chunks and filters) is changed in turn (to 0xff, 0 or with
// a bit flipped; all of them and more were tried once, which takes longer).
func TestCorruptFilesDoNotPanic(t *testing.T) {
	dir := t.TempDir()
	h5pytest.Run(t, dir, `
import h5py, numpy as np
with h5py.File('f.h5', 'w') as f:
    f.create_group('g')['a'] = np.arange(6, dtype=np.float32).reshape(2, 3)
    f.create_dataset('z', data=np.arange(40.0).reshape(8, 5), chunks=(3, 2), compression='gzip', shuffle=True)
    f['s'] = np.bytes_('abc')
`)
	whole, err := os.ReadFile(filepath.Join(dir, "f.h5"))
	if err != nil {
		t.Fatal(err)
	}
	readEverything := func(b []byte) {
		f, err := hdf5.NewReader(bytesReaderAt(b), "mutated.h5")
		if err != nil {
			return
		}
		for _, path := range []string{"g/a", "z", "s"} {
			d, err := f.OpenDataset(path)
			if err != nil {
				continue
			}
			if d.Count() > 1<<20 {
				continue
			}
			if d.Class() == hdf5.String {
				d.ReadString()
			} else {
				hdf5.ReadFloats(d, make([]float64, d.Count()))
			}
		}
	}
	mutated := make([]byte, len(whole))
	for i := range whole {
		for _, v := range []byte{[]byte{0xff, 0x00, whole[i] ^ 0x10}[i%3]} {
			copy(mutated, whole)
			mutated[i] = v
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("byte %d set to %#x: panic %v\n%s", i, v, r, debug.Stack())
					}
				}()
				readEverything(mutated)
			}()
		}
	}
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
