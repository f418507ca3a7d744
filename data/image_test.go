package data

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// opaque hides an image's concrete type, so ImagePixels takes its generic
// At path.
type opaque struct{ image.Image }

func noisyRGBA(w, h int, seed uint64) *image.NRGBA {
	rng := rand.New(rand.NewPCG(seed, 1))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.IntN(256))
	}
	return img
}

// TestImagePixelsFastPathsMatchAt checks every fast path against the At
// path, for every colour mode, including odd sizes, subsampled chroma,
// translucent NRGBA pixels and a sub-image with a non-zero origin.
func TestImagePixelsFastPathsMatchAt(t *testing.T) {
	src := noisyRGBA(7, 5, 1)
	rgba := image.NewRGBA(src.Rect)
	for i := range rgba.Pix { // premultiplied: colour <= alpha
		rgba.Pix[i] = min(src.Pix[i], src.Pix[i|3])
	}
	gray := image.NewGray(src.Rect)
	copy(gray.Pix, src.Pix)
	images := map[string]image.Image{
		"nrgba": src, "rgba": rgba, "gray": gray,
		"nrgba sub-image": src.SubImage(image.Rect(2, 1, 6, 5)),
		"gray sub-image":  gray.SubImage(image.Rect(1, 2, 7, 4)),
	}
	for _, r := range []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422,
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410} {
		y := image.NewYCbCr(src.Rect, r)
		rng := rand.New(rand.NewPCG(uint64(r), 2))
		for _, p := range [][]byte{y.Y, y.Cb, y.Cr} {
			for i := range p {
				p[i] = byte(rng.IntN(256))
			}
		}
		images["ycbcr "+r.String()] = y
		images["ycbcr sub-image "+r.String()] = y.SubImage(image.Rect(1, 1, 6, 4))
	}
	for name, img := range images {
		for _, mode := range []ColorMode{Native, Color, Gray} {
			if _, ok := img.(*image.YCbCr); ok && mode == Gray {
				continue // the luma plane: TestImagePixelsYCbCrGray
			}
			c, h, w, got := ImagePixels(img, mode, nil)
			gc, gh, gw, want := ImagePixels(opaque{img}, mode, nil)
			if c != gc || h != gh || w != gw || !bytes.Equal(got, want) {
				t.Errorf("%s, mode %d: fast path gives %dx%dx%d %v, At gives %dx%dx%d %v", name, mode, c, h, w, got, gc, gh, gw, want)
			}
		}
	}
}

// TestImagePixelsDropAlpha: as OpenCV's imread (Caffe's reader), a
// pixel's stored colour is kept and its alpha dropped, whether the image is
// NRGBA, NRGBA64 or paletted with transparency, through the fast path or At.
func TestImagePixelsDropAlpha(t *testing.T) {
	rect := image.Rect(0, 0, 2, 1)
	nrgba := image.NewNRGBA(rect)
	copy(nrgba.Pix, []byte{200, 100, 50, 0, 200, 100, 50, 128})
	nrgba64 := image.NewNRGBA64(rect)
	for x := range 2 {
		nrgba64.SetNRGBA64(x, 0, color.NRGBA64{200 * 0x101, 100 * 0x101, 50 * 0x101, uint16(x * 0x8000)})
	}
	pal := image.NewPaletted(rect, color.Palette{color.NRGBA{200, 100, 50, 0}, color.NRGBA{200, 100, 50, 128}})
	pal.Pix[1] = 1
	want := []byte{50, 50, 100, 100, 200, 200} // B, G, R planes
	for name, img := range map[string]image.Image{"nrgba": nrgba, "nrgba At": opaque{nrgba}, "nrgba64": nrgba64, "paletted": pal} {
		c, h, w, got := ImagePixels(img, Color, nil)
		if c != 3 || h != 1 || w != 2 || !bytes.Equal(got, want) {
			t.Errorf("%s: %dx%dx%d %v, want 3x1x2 %v", name, c, h, w, got, want)
		}
	}
}

func TestImagePixelsYCbCrGray(t *testing.T) {
	y := image.NewYCbCr(image.Rect(0, 0, 3, 2), image.YCbCrSubsampleRatio420)
	copy(y.Y, []byte{1, 2, 3, 4, 5, 6})
	c, h, w, pix := ImagePixels(y, Gray, nil)
	if c != 1 || h != 2 || w != 3 || !bytes.Equal(pix, []byte{1, 2, 3, 4, 5, 6}) {
		t.Errorf("gray YCbCr: %dx%dx%d %v, want the luma plane 1x2x3 [1 2 3 4 5 6]", c, h, w, pix)
	}
}

// TestImagePixelsReusesBuffer: a large enough buffer is reused, so
// decoding a stream of images allocates no new pixel planes.
func TestImagePixelsReusesBuffer(t *testing.T) {
	img := noisyRGBA(4, 4, 3)
	buf := make([]byte, 100)
	_, _, _, pix := ImagePixels(img, Color, buf)
	if &pix[0] != &buf[0] || len(pix) != 48 {
		t.Error("ImagePixels did not reuse the buffer")
	}
	if n := testing.AllocsPerRun(10, func() { ImagePixels(img, Color, buf) }); n != 0 {
		t.Errorf("ImagePixels allocates %v times with a buffer, want 0", n)
	}
}

func TestImageToDatumNative(t *testing.T) {
	gray := image.NewGray(image.Rect(0, 0, 2, 1))
	gray.Pix[0], gray.Pix[1] = 7, 9
	d := ImageToDatum(gray, Native)
	if d.GetChannels() != 1 || !bytes.Equal(d.GetData(), []byte{7, 9}) {
		t.Errorf("native gray: %v", d)
	}
	d = ImageToDatum(gray, Color)
	if d.GetChannels() != 3 || !bytes.Equal(d.GetData(), []byte{7, 9, 7, 9, 7, 9}) {
		t.Errorf("gray forced to colour: %v", d)
	}
}

// TestResizerReusedAcrossSizes checks hand-computed INTER_LINEAR values
// through one Resizer, whose cached tables must follow each new size:
// enlarging samples at (d + 0.5)/2 - 0.5 with edge clamping, shrinking by
// 2 averages pairs, and weights round to 11 bits.
func TestResizerReusedAcrossSizes(t *testing.T) {
	var r Resizer
	cases := []struct {
		src          []byte
		h, w, oh, ow int
		want         []byte
	}{
		{[]byte{0, 100}, 1, 2, 1, 4, []byte{0, 25, 75, 100}},
		{[]byte{10, 20, 30, 40}, 1, 4, 1, 2, []byte{15, 35}},
		{[]byte{10, 20, 30, 40}, 4, 1, 2, 1, []byte{15, 35}},
		// (0.75*0 + 0.25*255) = 63.75 -> 64; the other side by symmetry.
		{[]byte{0, 255, 0}, 1, 3, 1, 2, []byte{64, 64}},
		{[]byte{0, 100, 200, 40}, 2, 2, 2, 2, []byte{0, 100, 200, 40}},
		{[]byte{0, 100, 200, 40}, 2, 2, 1, 1, []byte{85}}, // centre: mean of four
	}
	for _, c := range cases {
		got, err := r.Resize(nil, c.src, 1, c.h, c.w, c.oh, c.ow)
		if err != nil || !bytes.Equal(got, c.want) {
			t.Errorf("resize %v (%dx%d) to %dx%d = %v, %v; want %v", c.src, c.h, c.w, c.oh, c.ow, got, err, c.want)
		}
	}
	// Channels are resized independently.
	got, err := r.Resize(nil, []byte{0, 100, 50, 50}, 2, 1, 2, 1, 4)
	if err != nil || !bytes.Equal(got, []byte{0, 25, 75, 100, 50, 50, 50, 50}) {
		t.Errorf("two channels: %v, %v", got, err)
	}
}

func writeImage(t *testing.T, path string, img image.Image) {
	t.Helper()
	var buf bytes.Buffer
	var err error
	if strings.HasSuffix(path, ".png") {
		err = png.Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95})
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestImageReader(t *testing.T) {
	dir := t.TempDir()
	img := image.NewRGBA(image.Rect(0, 0, 4, 2))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	path := filepath.Join(dir, "a.png")
	writeImage(t, path, img)
	r := ImageReader{Mode: Color}
	rec, err := r.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Channels != 3 || rec.Height != 2 || rec.Width != 4 || rec.Data[0] != 0 || rec.Data[16] != 255 {
		t.Errorf("read %dx%dx%d %v", rec.Channels, rec.Height, rec.Width, rec.Data)
	}
	r = ImageReader{Mode: Gray, Height: 3, Width: 5}
	if rec, err = r.Read(path); err != nil || rec.Channels != 1 || rec.Height != 3 || rec.Width != 5 || len(rec.Data) != 15 {
		t.Errorf("resized gray read: %+v, %v", rec, err)
	}
	if _, err := r.Read(filepath.Join(dir, "missing.png")); err == nil || !strings.Contains(err.Error(), "missing.png") {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.jpg")
	if err := os.WriteFile(bad, []byte("not a jpeg"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(bad); err == nil || !strings.Contains(err.Error(), "could not decode image "+bad) {
		t.Errorf("undecodable file: %v", err)
	}
}
