package main

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// testImage is an image whose pixels are known: colour values that vary
// with x and y and never repeat across channels.
func testImage(w, h, seed int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, color.NRGBA{R: uint8(seed + 40*x), G: uint8(seed + 60*y), B: uint8(seed + 10*x + 20*y + 5), A: 255})
		}
	}
	return img
}

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bgrPlanes is the raw datum layout of an image: B, G, R planes.
func bgrPlanes(img image.Image) []byte {
	b := img.Bounds()
	plane := b.Dx() * b.Dy()
	out := make([]byte, 3*plane)
	for y := range b.Dy() {
		for x := range b.Dx() {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			i := y*b.Dx() + x
			out[i], out[plane+i], out[2*plane+i] = byte(bl>>8), byte(g>>8), byte(r>>8)
		}
	}
	return out
}

// grayPlane is the grey level of each pixel, 0.299 R + 0.587 G + 0.114 B
// rounded, as OpenCV's conversion. data.ImageToDatum uses Go's
// color.GrayModel, which has the same weights but truncates, so results may
// be one level lower: compare with closeBytes.
func grayPlane(img image.Image) []byte {
	b := img.Bounds()
	out := make([]byte, 0, b.Dx()*b.Dy())
	for y := range b.Dy() {
		for x := range b.Dx() {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			v := (299*float64(r>>8) + 587*float64(g>>8) + 114*float64(bl>>8)) / 1000
			out = append(out, byte(v+0.5))
		}
	}
	return out
}

// closeBytes reports whether a and b have the same length and differ by
// at most one in every element.
func closeBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if d := int(a[i]) - int(b[i]); d < -1 || d > 1 {
			return false
		}
	}
	return true
}

// imageTree writes images into a root folder and a list file naming them.
type imageTree struct {
	root, list string
}

func newImageTree(t *testing.T, files map[string][]byte, list string) imageTree {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "images")
	for name, b := range files {
		writeTestFile(t, root, name, b)
	}
	return imageTree{root: root + "/", list: writeTestFile(t, dir, "list.txt", []byte(list))}
}

func convertImages(t *testing.T, tree imageTree, backend string, flags ...string) (string, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "db")
	args := append(append([]string{"convert_imageset", "-backend", backend}, flags...), tree.root, tree.list, db)
	code, _, stderr := runCmd(args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", flags, code, stderr)
	}
	return db, stderr
}

func TestConvertImagesetRaw(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend caffepb.DataParameter_DB, name string) {
		logs := captureLog(t)
		a, b := testImage(4, 3, 0), testImage(5, 2, 7)
		grey := image.NewGray(image.Rect(0, 0, 2, 2))
		copy(grey.Pix, []byte{0, 80, 160, 240})
		tree := newImageTree(t, map[string][]byte{
			"a.png":     encodePNG(t, a),
			"sub/b.png": encodePNG(t, b),
			"g.png":     encodePNG(t, grey),
		}, "a.png 3\nsub/b.png 1\n\r\n  g.png\t7  \r\n")

		db, _ := convertImages(t, tree, name)
		recs := readDB(t, backend, db)
		want := []struct {
			key     string
			label   int32
			c, h, w int32
			px      []byte
		}{
			{"00000000_a.png", 3, 3, 3, 4, bgrPlanes(a)},
			{"00000001_sub/b.png", 1, 3, 2, 5, bgrPlanes(b)},
			// Colour mode gives grey images three equal channels, as
			// OpenCV's imread does.
			{"00000002_g.png", 7, 3, 2, 2, slices.Concat(grey.Pix, grey.Pix, grey.Pix)},
		}
		if len(recs) != len(want) {
			t.Fatalf("%d records, want %d", len(recs), len(want))
		}
		for i, w := range want {
			d := recs[i].datum
			if recs[i].key != w.key || d.GetLabel() != w.label || d.GetChannels() != w.c || d.GetHeight() != w.h || d.GetWidth() != w.w || d.GetEncoded() {
				t.Errorf("record %d: key %q label %d shape %dx%dx%d encoded %v; want %q label %d shape %dx%dx%d",
					i, recs[i].key, d.GetLabel(), d.GetChannels(), d.GetHeight(), d.GetWidth(), d.GetEncoded(), w.key, w.label, w.c, w.h, w.w)
			}
			if !bytes.Equal(d.GetData(), w.px) {
				t.Errorf("record %d: pixels %v, want %v", i, d.GetData(), w.px)
			}
		}
		if !strings.Contains(logs.String(), "A total of 3 images.") || !strings.Contains(logs.String(), "Processed 3 files.") {
			t.Errorf("log:\n%s", logs)
		}
	})
}

func TestConvertImagesetGrayAndResize(t *testing.T) {
	captureLog(t)
	a := testImage(6, 4, 3)
	tree := newImageTree(t, map[string][]byte{"a.png": encodePNG(t, a)}, "a.png 0\n")
	const backend = caffepb.DataParameter_LEVELDB

	db, _ := convertImages(t, tree, "leveldb", "-gray")
	d := readDB(t, backend, db)[0].datum
	if d.GetChannels() != 1 || d.GetHeight() != 4 || d.GetWidth() != 6 {
		t.Fatalf("gray: shape %dx%dx%d", d.GetChannels(), d.GetHeight(), d.GetWidth())
	}
	if want := grayPlane(a); !closeBytes(d.GetData(), want) {
		t.Errorf("gray pixels %v, want %v", d.GetData(), want)
	}

	// Resizing is ResizeBilinear on the planes the image converts to.
	db, _ = convertImages(t, tree, "leveldb", "-resize_width", "9", "-resize_height", "3")
	d = readDB(t, backend, db)[0].datum
	want, err := data.ResizeBilinear(bgrPlanes(a), 3, 4, 6, 3, 9)
	if err != nil {
		t.Fatal(err)
	}
	if d.GetChannels() != 3 || d.GetHeight() != 3 || d.GetWidth() != 9 || !bytes.Equal(d.GetData(), want) {
		t.Errorf("resized: shape %dx%dx%d, pixels %v, want 3x3x9 %v", d.GetChannels(), d.GetHeight(), d.GetWidth(), d.GetData(), want)
	}

	// A flat image stays flat at any size.
	flat := image.NewNRGBA(image.Rect(0, 0, 7, 5))
	for i := 0; i < len(flat.Pix); i += 4 {
		copy(flat.Pix[i:], []byte{10, 20, 30, 255})
	}
	tree = newImageTree(t, map[string][]byte{"f.png": encodePNG(t, flat)}, "f.png 0\n")
	db, _ = convertImages(t, tree, "leveldb", "-resize_width", "3", "-resize_height", "11")
	d = readDB(t, backend, db)[0].datum
	wantFlat := slices.Concat(bytes.Repeat([]byte{30}, 33), bytes.Repeat([]byte{20}, 33), bytes.Repeat([]byte{10}, 33))
	if !bytes.Equal(d.GetData(), wantFlat) {
		t.Errorf("flat image resized: %v", d.GetData())
	}
}

func TestConvertImagesetEncoded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, backend caffepb.DataParameter_DB, name string) {
		captureLog(t)
		a := testImage(4, 3, 1)
		pngBytes := encodePNG(t, a)
		jpgBytes := encodeJPEG(t, a)
		tree := newImageTree(t, map[string][]byte{"a.png": pngBytes, "b.jpg": jpgBytes}, "a.png 1\nb.jpg 2\n")
		jpgImg, err := jpeg.Decode(bytes.NewReader(jpgBytes))
		if err != nil {
			t.Fatal(err)
		}

		decode := func(t *testing.T, d *caffepb.Datum) *caffepb.Datum {
			t.Helper()
			if !d.GetEncoded() || d.Channels != nil || d.Height != nil || d.Width != nil {
				t.Fatalf("datum not stored as Caffe's encoded datums: encoded %v, shape fields %v %v %v", d.GetEncoded(), d.Channels, d.Height, d.Width)
			}
			raw, err := data.DecodeDatum(d, data.Native, 0)
			if err != nil {
				t.Fatal(err)
			}
			return raw
		}

		// The files' own bytes when nothing needs changing.
		db, _ := convertImages(t, tree, name, "-encoded")
		recs := readDB(t, backend, db)
		if !bytes.Equal(recs[0].datum.GetData(), pngBytes) || !bytes.Equal(recs[1].datum.GetData(), jpgBytes) {
			t.Errorf("-encoded did not store the files' bytes")
		}
		if recs[0].datum.GetLabel() != 1 || recs[1].datum.GetLabel() != 2 {
			t.Errorf("labels %d, %d", recs[0].datum.GetLabel(), recs[1].datum.GetLabel())
		}
		decode(t, recs[0].datum)

		// -encode_type png re-encodes the JPEG (implying -encoded) and keeps
		// the PNG as it is.
		db, _ = convertImages(t, tree, name, "-encode_type", "png")
		recs = readDB(t, backend, db)
		if !bytes.Equal(recs[0].datum.GetData(), pngBytes) {
			t.Errorf("the PNG was re-encoded as PNG")
		}
		if !bytes.HasPrefix(recs[1].datum.GetData(), []byte("\x89PNG")) {
			t.Fatalf("the JPEG was not re-encoded as PNG")
		}
		if got := decode(t, recs[1].datum); !bytes.Equal(got.GetData(), bgrPlanes(jpgImg)) {
			t.Errorf("the re-encoded JPEG's pixels differ from the JPEG's")
		}

		// Resizing re-encodes in the file's own format.
		db, _ = convertImages(t, tree, name, "-encoded", "-resize_width", "2", "-resize_height", "2")
		recs = readDB(t, backend, db)
		if !bytes.HasPrefix(recs[0].datum.GetData(), []byte("\x89PNG")) || !bytes.HasPrefix(recs[1].datum.GetData(), []byte("\xff\xd8")) {
			t.Errorf("resized images not re-encoded as PNG and JPEG")
		}
		want, _ := data.ResizeBilinear(bgrPlanes(a), 3, 3, 4, 2, 2)
		if got := decode(t, recs[0].datum); got.GetHeight() != 2 || got.GetWidth() != 2 || !bytes.Equal(got.GetData(), want) {
			t.Errorf("resized PNG decodes to %dx%d %v, want 2x2 %v", got.GetHeight(), got.GetWidth(), got.GetData(), want)
		}

		// -gray -encoded stores grey images, which decode to one channel:
		// a colour file is re-encoded, a grey one kept as it is.
		grey := image.NewGray(image.Rect(0, 0, 2, 2))
		copy(grey.Pix, []byte{5, 50, 100, 200})
		greyBytes := encodePNG(t, grey)
		tree = newImageTree(t, map[string][]byte{"a.png": pngBytes, "g.png": greyBytes}, "a.png 1\ng.png 2\n")
		db, _ = convertImages(t, tree, name, "-gray", "-encoded")
		recs = readDB(t, backend, db)
		if got := decode(t, recs[0].datum); got.GetChannels() != 1 || !closeBytes(got.GetData(), grayPlane(a)) {
			t.Errorf("-gray -encoded PNG decodes to %d channels %v, want %v", got.GetChannels(), got.GetData(), grayPlane(a))
		}
		if !bytes.Equal(recs[1].datum.GetData(), greyBytes) {
			t.Errorf("-gray -encoded re-encoded a grey PNG")
		}
		// Without -gray, the grey file becomes three channels.
		db, _ = convertImages(t, tree, name, "-encoded")
		recs = readDB(t, backend, db)
		if got := decode(t, recs[1].datum); got.GetChannels() != 3 || !bytes.Equal(got.GetData(), slices.Concat(grey.Pix, grey.Pix, grey.Pix)) {
			t.Errorf("-encoded grey PNG decodes to %d channels %v", got.GetChannels(), got.GetData())
		}
	})
}

func TestConvertImagesetShuffle(t *testing.T) {
	captureLog(t)
	files := map[string][]byte{}
	var list strings.Builder
	pix := encodePNG(t, testImage(2, 2, 0))
	for i := range 20 {
		name := fmt.Sprintf("img%02d.png", i)
		files[name] = pix
		fmt.Fprintf(&list, "%s %d\n", name, i)
	}
	tree := newImageTree(t, files, list.String())
	order := func(flags ...string) []string {
		db, _ := convertImages(t, tree, "leveldb", flags...)
		var names []string
		for i, r := range readDB(t, caffepb.DataParameter_LEVELDB, db) {
			// Keys number the shuffled positions in order.
			if !strings.HasPrefix(r.key, fmt.Sprintf("%08d_", i)) {
				t.Fatalf("key %d is %q", i, r.key)
			}
			name := strings.SplitN(r.key, "_", 2)[1]
			if want := fmt.Sprintf("img%02d.png", r.datum.GetLabel()); name != want {
				t.Fatalf("key %q has the label of %s", r.key, want)
			}
			names = append(names, name)
		}
		return names
	}
	plain := order()
	first, again, other := order("-shuffle", "-seed", "7"), order("-shuffle", "-seed", "7"), order("-shuffle", "-seed", "8")
	if !slices.Equal(first, again) {
		t.Errorf("the same seed gave two orders:\n%v\n%v", first, again)
	}
	if slices.Equal(first, plain) || slices.Equal(first, other) {
		t.Errorf("shuffling changed nothing or two seeds agree:\n%v\n%v\n%v", plain, first, other)
	}
	sorted := slices.Clone(first)
	slices.Sort(sorted)
	if !slices.Equal(sorted, plain) {
		t.Errorf("the shuffled list is not a permutation: %v", first)
	}
}

func TestConvertImagesetSkipsUnreadableImages(t *testing.T) {
	logs := captureLog(t)
	good := encodePNG(t, testImage(3, 3, 0))
	tree := newImageTree(t, map[string][]byte{"good.png": good, "bad.png": []byte("not an image at all")},
		"missing.png 0\ngood.png 1\nbad.png 2\n")
	db, _ := convertImages(t, tree, "leveldb")
	recs := readDB(t, caffepb.DataParameter_LEVELDB, db)
	// The key keeps the list position, as Caffe's.
	if len(recs) != 1 || recs[0].key != "00000001_good.png" {
		t.Fatalf("records %v", recs)
	}
	for _, want := range []string{
		"list.txt:1: skipping could not open or find file " + tree.root + "missing.png",
		"list.txt:3: skipping could not decode image " + tree.root + "bad.png",
		"2 of 3 images could not be read and were skipped; 1 stored",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}

	// None readable: an error, and no database left behind.
	tree = newImageTree(t, map[string][]byte{"bad.png": []byte("junk")}, "missing.png 0\nbad.png 1\n")
	db = filepath.Join(t.TempDir(), "db")
	code, _, stderr := runCmd("convert_imageset", "-backend", "leveldb", tree.root, tree.list, db)
	if code != 1 || !strings.Contains(stderr, "none of the 2 images listed in "+tree.list+" could be read") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("database left behind: %v", err)
	}
}

func TestConvertImagesetCheckSize(t *testing.T) {
	captureLog(t)
	tree := newImageTree(t, map[string][]byte{
		"a.png": encodePNG(t, testImage(4, 3, 0)),
		"b.png": encodePNG(t, testImage(5, 3, 0)),
	}, "a.png 0\nb.png 1\n")
	db := filepath.Join(t.TempDir(), "db")
	code, _, stderr := runCmd("convert_imageset", "-backend", "leveldb", "-check_size", tree.root, tree.list, db)
	if code != 1 || !strings.Contains(stderr, "list.txt:2: image b.png is 3x3x5") || !strings.Contains(stderr, "the first image, a.png, is 3x3x4") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("database left behind: %v", err)
	}
	// Resized to one size they pass.
	convertImages(t, tree, "leveldb", "-check_size", "-resize_width", "4", "-resize_height", "4")
	// -check_size also holds for encoded images, by their decoded size.
	code, _, stderr = runCmd("convert_imageset", "-backend", "leveldb", "-check_size", "-encoded", tree.root, tree.list, filepath.Join(t.TempDir(), "db"))
	if code != 1 || !strings.Contains(stderr, "-check_size") {
		t.Errorf("encoded: exit %d: %s", code, stderr)
	}
}

func TestConvertImagesetRootWithoutSlash(t *testing.T) {
	captureLog(t)
	tree := newImageTree(t, map[string][]byte{"a.png": encodePNG(t, testImage(2, 2, 0))}, "a.png 0\n")
	tree.root = strings.TrimSuffix(tree.root, "/")
	db, _ := convertImages(t, tree, "leveldb")
	if recs := readDB(t, caffepb.DataParameter_LEVELDB, db); len(recs) != 1 || recs[0].key != "00000000_a.png" {
		t.Errorf("records %v", recs)
	}
}

func TestConvertImagesetErrors(t *testing.T) {
	captureLog(t)
	img := encodePNG(t, testImage(2, 2, 0))
	for _, tc := range []struct {
		name  string
		list  string
		flags []string
		code  int
		want  []string
	}{
		{"no label", "a.png 1\nb.png\n", nil, 1, []string{"list.txt:2", `"b.png" has no label`}},
		{"bad label", "a.png 1\n\nb.png x1\n", nil, 1, []string{"list.txt:3", `label "x1" of b.png is not a 32-bit integer`}},
		{"empty list", "\n\n", nil, 1, []string{"lists no images"}},
		{"one size", "a.png 1\n", []string{"-resize_width", "4"}, 1, []string{"give both sizes"}},
		{"negative size", "a.png 1\n", []string{"-resize_width", "-4", "-resize_height", "4"}, 1, []string{"must not be negative"}},
		{"encode type", "a.png 1\n", []string{"-encode_type", "webp"}, 1, []string{`-encode_type "webp"`, "png and jpg"}},
		{"backend", "a.png 1\n", []string{"-backend", "sqlite"}, 1, []string{`unknown database backend "sqlite"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := newImageTree(t, map[string][]byte{"a.png": img, "b.png": img}, tc.list)
			db := filepath.Join(t.TempDir(), "db")
			args := append(append([]string{"convert_imageset", "-backend", "leveldb"}, tc.flags...), tree.root, tree.list, db)
			code, _, stderr := runCmd(args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q: %s", w, stderr)
				}
			}
			if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("database left behind: %v", err)
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "nolist.txt")
	if code, _, stderr := runCmd("convert_imageset", "-backend", "leveldb", "/", missing, filepath.Join(t.TempDir(), "db")); code != 1 || !strings.Contains(stderr, missing) {
		t.Errorf("missing list: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCmd("convert_imageset", "root/", "list"); code != 2 || !strings.Contains(stderr, "want 3 arguments") {
		t.Errorf("two arguments: exit %d: %s", code, stderr)
	}
}
