package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// idxBytes builds an IDX file of unsigned bytes with the given dimensions
// and payload.
func idxBytes(typ byte, dims []int, payload []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, typ, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(payload)
	return b.Bytes()
}

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIDXPlainAndGzip(t *testing.T) {
	payload := make([]byte, 3*2*4)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	plain := idxBytes(IDXUint8, []int{3, 2, 4}, payload)
	for _, tc := range []struct {
		name string
		file []byte
		gz   bool
	}{{"plain", plain, false}, {"gzip", gzipBytes(t, plain), true}} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := OpenIDX(writeFile(t, "f.idx", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			if x.Magic != 0x00000803 || x.Type != IDXUint8 || x.Count() != 3 || x.ItemSize() != 8 || x.Compressed() != tc.gz || x.HeaderSize() != 16 {
				t.Fatalf("header: magic %#x type %#x count %d item %d gz %v", x.Magic, x.Type, x.Count(), x.ItemSize(), x.Compressed())
			}
			buf := make([]byte, 8)
			for i := range 3 {
				if err := x.ReadItem(buf); err != nil {
					t.Fatalf("item %d: %v", i, err)
				}
				if !bytes.Equal(buf, payload[8*i:8*i+8]) {
					t.Errorf("item %d = %v, want %v", i, buf, payload[8*i:8*i+8])
				}
			}
			if err := x.ReadItem(buf); err != io.EOF {
				t.Errorf("past the end: %v, want io.EOF", err)
			}
		})
	}
}

func TestIDXElementSizes(t *testing.T) {
	// 2 items of 3 int32 values: 12 bytes each.
	x, err := NewIDXReader(bytes.NewReader(idxBytes(IDXInt32, []int{2, 3}, make([]byte, 24))), "ints")
	if err != nil {
		t.Fatal(err)
	}
	if x.ItemSize() != 12 || x.Count() != 2 {
		t.Errorf("int32 items: size %d count %d, want 12 and 2", x.ItemSize(), x.Count())
	}
	// A 1-D file (labels) has items of one element.
	x, err = NewIDXReader(bytes.NewReader(idxBytes(IDXUint8, []int{5}, make([]byte, 5))), "labels")
	if err != nil {
		t.Fatal(err)
	}
	if x.ItemSize() != 1 || x.Magic != 0x00000801 {
		t.Errorf("labels: item size %d magic %#x", x.ItemSize(), x.Magic)
	}
}

func TestIDXBadHeaders(t *testing.T) {
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "magic number"},
		{"html", []byte("<!DOCTYPE html><html>"), "not an IDX file"},
		{"type", idxBytes(0x07, []int{1}, []byte{0}), "unknown element type 0x07"},
		{"no dims", []byte{0, 0, 8, 0}, "0 dimensions"},
		{"short dims", []byte{0, 0, 8, 3, 0, 0, 0, 1}, "dimension sizes"},
		{"zero dim", idxBytes(IDXUint8, []int{1, 0, 4}, nil), "dimension 1 has size 0"},
		{"huge item", idxBytes(IDXFloat64, []int{1, 1 << 16, 1 << 16}, nil), "damaged"},
		{"huge total", idxBytes(IDXUint8, []int{1<<32 - 1, 1 << 20, 1 << 9}, nil), "damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewIDXReader(bytes.NewReader(tc.file), "x.idx")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.idx") {
				t.Errorf("error %v, want one naming x.idx and containing %q", err, tc.want)
			}
		})
	}
}

func TestIDXTruncated(t *testing.T) {
	full := idxBytes(IDXUint8, []int{4, 2, 2}, make([]byte, 16))
	short := full[:len(full)-3] // the last item loses 3 of its 4 bytes

	// A plain file's size is checked against the header at once.
	_, err := OpenIDX(writeFile(t, "short.idx", short))
	if err == nil || !strings.Contains(err.Error(), "truncated") || !strings.Contains(err.Error(), "4 items of 4 bytes") {
		t.Errorf("plain: %v", err)
	}

	// A compressed one is found out at the item that ends early.
	x, err := OpenIDX(writeFile(t, "short.idx.gz", gzipBytes(t, short)))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	buf := make([]byte, 4)
	for i := range 3 {
		if err := x.ReadItem(buf); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
	}
	err = x.ReadItem(buf)
	if err == nil || !strings.Contains(err.Error(), "item 3 of 4 ends after 1 of its 4 bytes") {
		t.Errorf("gzip: %v", err)
	}

	// A gzip stream cut short (its trailer lost) fails too.
	gz := gzipBytes(t, full)
	x, err = OpenIDX(writeFile(t, "cut.gz", gz[:len(gz)-6]))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for i := 0; ; i++ {
		if err = x.ReadItem(buf); err != nil {
			break
		}
	}
	if err == io.EOF || !strings.Contains(err.Error(), "gzip stream is damaged") {
		t.Errorf("cut gzip stream: %v", err)
	}
}

func TestIDXDamagedGzipChecksum(t *testing.T) {
	gz := gzipBytes(t, idxBytes(IDXUint8, []int{2, 2}, []byte{1, 2, 3, 4}))
	gz[len(gz)-8] ^= 0xff // the CRC-32 of the trailer
	x, err := OpenIDX(writeFile(t, "crc.gz", gz))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	buf := make([]byte, 2)
	if err := x.ReadItem(buf); err != nil {
		t.Fatal(err)
	}
	if err := x.ReadItem(buf); err == nil || !strings.Contains(err.Error(), "gzip stream is damaged") {
		t.Errorf("bad CRC: %v", err)
	}
}

func TestIDXMissingFile(t *testing.T) {
	_, err := OpenIDX(filepath.Join(t.TempDir(), "nope.idx"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope.idx") {
		t.Errorf("missing file: %v", err)
	}
}

// TestIDXFashionMNIST reads Debian's dataset-fashion-mnist when it is
// installed: every test image and label, and the headers of the training
// files.
func TestIDXFashionMNIST(t *testing.T) {
	const dir = "/usr/share/datasets/fashion-mnist"
	images, err := OpenIDX(filepath.Join(dir, "t10k-images-idx3-ubyte.gz"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("dataset-fashion-mnist is not installed")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer images.Close()
	labels, err := OpenIDX(filepath.Join(dir, "t10k-labels-idx1-ubyte.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer labels.Close()
	if images.Magic != 2051 || labels.Magic != 2049 || len(images.Dims) != 3 || images.Count() != labels.Count() {
		t.Fatalf("headers: images %#x %v, labels %#x %v", images.Magic, images.Dims, labels.Magic, labels.Dims)
	}
	img := make([]byte, images.ItemSize())
	lab := make([]byte, 1)
	for i := range images.Count() {
		if err := images.ReadItem(img); err != nil {
			t.Fatal(err)
		}
		if err := labels.ReadItem(lab); err != nil {
			t.Fatal(err)
		}
		if lab[0] > 9 {
			t.Fatalf("label %d of item %d is not a class 0-9", lab[0], i)
		}
	}
}
