package datalayer_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// colorImage is a w x h image whose pixel (x, y) is (R, G, B) = (base+x,
// base+y, base).
func colorImage(w, h int, base byte) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{base + byte(x), base + byte(y), base, 255})
		}
	}
	return img
}

// writeImageList writes the images as PNG files img<i>.png under a folder
// and a list of `img<i>.png <label>` lines (label 10+i); it returns the
// folder (with a trailing slash, for root_folder) and the list's path.
func writeImageList(t *testing.T, imgs []image.Image) (root, list string) {
	t.Helper()
	dir := t.TempDir()
	var lines strings.Builder
	for i, img := range imgs {
		name := fmt.Sprintf("img%d.png", i)
		if err := os.WriteFile(filepath.Join(dir, name), encodePNG(t, img), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&lines, "%s %d\n", name, 10+i)
	}
	list = filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir + "/", list
}

func imageDataText(root, list, param, rest string) string {
	return fmt.Sprintf(`type: "ImageData" image_data_param { source: "%s" root_folder: "%s" %s } %s`, list, root, param, rest)
}

// TestImageDataReadsInOrder: colour images come out as B, G, R planes, in
// list order with their labels, going back to the first after the last.
func TestImageDataReadsInOrder(t *testing.T) {
	var imgs []image.Image
	for i := range 3 {
		imgs = append(imgs, colorImage(4, 2, byte(20*i)))
	}
	root, list := writeImageList(t, imgs)
	l, top := setUpSource[float32](t, imageDataText(root, list, "batch_size: 2", ""), 1, 2)
	if !slices.Equal(top[0].Shape(), []int{2, 3, 2, 4}) {
		t.Fatalf("top shaped %v, want [2 3 2 4]", top[0].Shape())
	}
	got := batches(t, l, top, 3)
	order := []int{0, 1, 2, 0, 1, 2}
	for k, i := range order {
		pass, item := got[k/2], k%2
		base := float32(20 * i)
		want := []float32{base, base, base, base, base, base, base, base, // B
			base, base, base, base, base + 1, base + 1, base + 1, base + 1, // G = base + y
			base, base + 1, base + 2, base + 3, base, base + 1, base + 2, base + 3} // R = base + x
		if g := pass[0][item*24 : (item+1)*24]; !slices.Equal(g, want) {
			t.Fatalf("item %d (image %d): %v, want %v", k, i, g, want)
		}
		if pass[1][item] != float32(10+i) {
			t.Fatalf("item %d: label %v, want %d", k, pass[1][item], 10+i)
		}
	}
}

// uniform is a w x h image of one colour.
func uniform(w, h int, c color.RGBA) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	return img
}

// TestImageDataGrayResizeTransform: is_color false gives one channel;
// new_height and new_width bring images of any size to one size (a
// uniform image stays uniform), before the transformation.
func TestImageDataGrayResizeTransform(t *testing.T) {
	gray := image.NewGray(image.Rect(0, 0, 5, 4))
	for i := range gray.Pix {
		gray.Pix[i] = 7
	}
	root, list := writeImageList(t, []image.Image{gray, uniform(8, 2, color.RGBA{100, 100, 100, 255}), uniform(3, 3, color.RGBA{30, 60, 90, 255})})
	l, top := setUpSource[float32](t, imageDataText(root, list, "batch_size: 3 is_color: false new_height: 3 new_width: 6",
		`transform_param { scale: 2 }`), 1, 2)
	if !slices.Equal(top[0].Shape(), []int{3, 1, 3, 6}) {
		t.Fatalf("top shaped %v, want [3 1 3 6]", top[0].Shape())
	}
	layertest.Forward(t, l, nil, top)
	gray3 := float32((19595*30*257 + 38470*60*257 + 7471*90*257 + 1<<15) >> 24) // color.GrayModel
	for i, want := range []float32{7, 100, gray3} {
		for j, v := range top[0].CPUData()[i*18 : (i+1)*18] {
			if v != 2*want {
				t.Fatalf("image %d, value %d: %v, want 2 * %v", i, j, v, want)
			}
		}
	}
	layertest.CheckClose(t, "labels", top[1].CPUData(), []float32{10, 11, 12}, 0)
}

// TestImageDataJPEG reads a JPEG file (lossy: within a few levels).
func TestImageDataJPEG(t *testing.T) {
	dir := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = 200, 100, 50, 255
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a b.jpg"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte("a b.jpg 3\r\n\n"), 0o644); err != nil { // a space in the name, CRLF, a blank line
		t.Fatal(err)
	}
	l, top := setUpSource[float32](t, imageDataText(dir+"/", list, "batch_size: 1", ""), 1, 2)
	layertest.Forward(t, l, nil, top)
	for c, want := range []float32{50, 100, 200} {
		if v := top[0].CPUData()[c*256+37]; math.Abs(float64(v-want)) > 3 {
			t.Errorf("channel %d: %v, want about %v", c, v, want)
		}
	}
	layertest.CheckClose(t, "label", top[1].CPUData(), []float32{3}, 0)
}

// labelOrder runs forward passes of batch 1 and returns the labels.
func labelOrder(t *testing.T, l layer.Layer[float32], top []*blob.Blob[float32], n int) []int {
	var out []int
	for _, pass := range batches(t, l, top, n) {
		out = append(out, int(pass[1][0]))
	}
	return out
}

// TestImageDataShuffle: with shuffle each epoch is a permutation of the
// list, reshuffled between epochs, the same for the same seed and another
// for another seed.
func TestImageDataShuffle(t *testing.T) {
	var imgs []image.Image
	for range 8 {
		imgs = append(imgs, grayImage(2, 2, 0))
	}
	root, list := writeImageList(t, imgs)
	run := func(seed uint64) []int {
		l, top := setUpSource[float32](t, imageDataText(root, list, "batch_size: 1 shuffle: true", ""), seed, 2)
		return labelOrder(t, l, top, 24)
	}
	a, b, c := run(5), run(5), run(6)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, different orders: %v and %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 5 and 6 gave the same order %v", a)
	}
	for e := range 3 {
		epoch := slices.Clone(a[8*e : 8*e+8])
		slices.Sort(epoch)
		if !slices.Equal(epoch, []int{10, 11, 12, 13, 14, 15, 16, 17}) {
			t.Fatalf("epoch %d is not a permutation of the list: %v", e, a[8*e:8*e+8])
		}
	}
	if slices.Equal(a[:8], a[8:16]) || slices.Equal(a[8:16], a[16:]) {
		t.Errorf("not reshuffled between epochs: %v", a)
	}
	if slices.Equal(a[:8], []int{10, 11, 12, 13, 14, 15, 16, 17}) {
		t.Errorf("first epoch not shuffled: %v", a[:8])
	}
}

// TestImageDataRandSkip: the first image is one in [0, rand_skip), in list
// order from there.
func TestImageDataRandSkip(t *testing.T) {
	var imgs []image.Image
	for range 6 {
		imgs = append(imgs, grayImage(2, 2, 0))
	}
	root, list := writeImageList(t, imgs)
	firsts := map[int]bool{}
	for seed := range uint64(10) {
		l, top := setUpSource[float32](t, imageDataText(root, list, "batch_size: 1 rand_skip: 4", ""), seed, 2)
		order := labelOrder(t, l, top, 3)
		if order[0] < 10 || order[0] >= 14 || order[1] != order[0]+1 || order[2] != order[0]+2 {
			t.Fatalf("seed %d: labels %v, want three consecutive from one in [10, 14)", seed, order)
		}
		firsts[order[0]] = true
	}
	if len(firsts) < 2 {
		t.Errorf("10 seeds skipped to the same image: %v", firsts)
	}
}

func TestImageDataErrors(t *testing.T) {
	root, list := writeImageList(t, []image.Image{grayImage(3, 2, 0), grayImage(4, 2, 0)})
	dir := filepath.Dir(list)
	writeList := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	missing := filepath.Join(dir, "missing.txt")
	wantError(t, "missing list", setUpError(t, imageDataText(root, missing, "", ""), 2), `layer "ImageData" (ImageData)`, missing)
	noLabel := writeList("nolabel.txt", "img0.png 1\nimg1.png\n")
	wantError(t, "line without label", setUpError(t, imageDataText(root, noLabel, "", ""), 2), noLabel+":2:", "no label")
	badLabel := writeList("badlabel.txt", "img0.png one\n")
	wantError(t, "non-integer label", setUpError(t, imageDataText(root, badLabel, "", ""), 2), badLabel+":1:", "not a 32-bit integer")
	empty := writeList("empty.txt", "\n\n")
	wantError(t, "empty list", setUpError(t, imageDataText(root, empty, "", ""), 2), empty, "is empty")
	if err := os.WriteFile(filepath.Join(dir, "bad.png"), []byte("not a png"), 0o644); err != nil {
		t.Fatal(err)
	}
	badFirst := writeList("badfirst.txt", "bad.png 0\n")
	wantError(t, "undecodable first image", setUpError(t, imageDataText(root, badFirst, "", ""), 2), badFirst, "line 1", root+"bad.png")
	noFile := writeList("nofile.txt", "nope.png 0\n")
	wantError(t, "missing image", setUpError(t, imageDataText(root, noFile, "", ""), 2), root+"nope.png")
	wantError(t, "new_height alone", setUpError(t, imageDataText(root, list, "new_height: 4", ""), 2), "new_height and new_width")
	wantError(t, "one top", setUpError(t, imageDataText(root, list, "", ""), 1), "takes 2 top")

	badLater := writeList("badlater.txt", "img0.png 0\nimg0.png 0\nbad.png 1\n")
	wantError(t, "undecodable later image", forwardError(t, imageDataText(root, badLater, "batch_size: 1", ""), 2),
		`layer "ImageData" (ImageData)`, badLater, "line 3", root+"bad.png")
	// Without new_height/new_width the images of a batch must give its
	// first image's shape.
	wantError(t, "sizes differ", forwardError(t, imageDataText(root, list, "batch_size: 2", ""), 0),
		list, "line 2", root+"img1.png", "image of 3x2x4", "first image of its batch gives 3x2x3")
}

// TestImageDataShapesEachBatch: as in Caffe, each batch takes the shape of
// its first image, so images of several sizes pass one at a time, with
// and without prefetching, and the tops follow them.
func TestImageDataShapesEachBatch(t *testing.T) {
	imgs := []image.Image{colorImage(3, 2, 10), colorImage(5, 4, 20), colorImage(2, 6, 30)}
	root, list := writeImageList(t, imgs)
	for _, prefetch := range []int{0, 3} {
		text := imageDataText(root, list, "batch_size: 1", fmt.Sprintf("data_param { prefetch: %d }", prefetch))
		l, top := setUpSource[float32](t, text, 1, 2)
		want := [][]int{{1, 3, 2, 3}, {1, 3, 4, 5}, {1, 3, 6, 2}, {1, 3, 2, 3}, {1, 3, 4, 5}}
		for k, shape := range want {
			layertest.Forward(t, l, nil, top)
			if !slices.Equal(top[0].Shape(), shape) {
				t.Fatalf("prefetch %d, pass %d: data shaped %v, want %v", prefetch, k, top[0].Shape(), shape)
			}
			base := float32(10 * (k%3 + 1)) // the blue plane, first
			for i, v := range top[0].CPUData()[:shape[2]*shape[3]] {
				if v != base {
					t.Fatalf("prefetch %d, pass %d: data[%d] = %v, want %v", prefetch, k, i, v, base)
				}
			}
		}
	}
}

// TestImageDataDeterministic: the same seed gives the same batches (the
// shuffles, random crops and mirrors included) with or without
// prefetching, which begins a batch before the one before it finishes.
func TestImageDataDeterministic(t *testing.T) {
	var imgs []image.Image
	for i := range 7 {
		imgs = append(imgs, colorImage(6, 5, byte(30*i)))
	}
	root, list := writeImageList(t, imgs)
	run := func(prefetch int) [][][]float32 {
		text := imageDataText(root, list, "batch_size: 3 shuffle: true",
			fmt.Sprintf("data_param { prefetch: %d } transform_param { crop_size: 4 mirror: true }", prefetch))
		l, top := setUpSource[float32](t, text, 9, 2)
		defer l.(closer).Close()
		return batches(t, l, top, 7)
	}
	ahead, sync := run(4), run(0)
	for i := range sync {
		for k := range sync[i] {
			if !slices.Equal(ahead[i][k], sync[i][k]) {
				t.Fatalf("batch %d top %d differs between prefetch 4 and prefetch 0", i, k)
			}
		}
	}
}
