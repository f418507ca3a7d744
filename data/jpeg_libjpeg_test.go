//go:build libjpeg

package data

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// jpegOf encodes a smooth colour image (or a grey one) of w x h at
// quality 90; Go's encoder subsamples chroma 4:2:0.
func jpegOf(t testing.TB, w, h int, grey bool) []byte {
	t.Helper()
	var img image.Image
	if grey {
		g := image.NewGray(image.Rect(0, 0, w, h))
		for i := range g.Pix {
			g.Pix[i] = byte(i*3 + i/w)
		}
		img = g
	} else {
		c := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				c.Set(x, y, color.RGBA{byte(4 * x), byte(3 * y), byte(2*x + y), 255})
			}
		}
		img = c
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// libjpeg's pixels are within a few grey levels of Go's decoder (their
// IDCTs and chroma upsampling differ), in every colour mode, with the
// same number of channels.
func TestLibjpegAgreesWithGo(t *testing.T) {
	for _, c := range []struct {
		w, h int
		grey bool
	}{{64, 48, false}, {37, 23, false}, {1, 1, false}, {40, 30, true}} {
		data := jpegOf(t, c.w, c.h, c.grey)
		ref, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []ColorMode{Native, Color, Gray} {
			r := ImageReader{Mode: mode}
			got, err := r.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			wc, wh, ww, want := ImagePixels(ref, mode, nil)
			if got.Channels != wc || got.Height != wh || got.Width != ww {
				t.Fatalf("%dx%d grey %v mode %v: %dx%dx%d, Go %dx%dx%d", c.w, c.h, c.grey, mode, got.Channels, got.Height, got.Width, wc, wh, ww)
			}
			worst, sum := 0.0, 0.0
			for i := range want {
				d := math.Abs(float64(got.Data[i]) - float64(want[i]))
				worst, sum = math.Max(worst, d), sum+d
			}
			if mean := sum / float64(len(want)); worst > 8 || mean > 1.5 {
				t.Errorf("%dx%d grey %v mode %v: largest difference %v, mean %.2f grey levels from Go's decoder", c.w, c.h, c.grey, mode, worst, mean)
			}
		}
	}
}

// Data that is not a JPEG libjpeg decodes goes to Go's decoders and their
// errors; a broken JPEG is an error, not a crash.
func TestLibjpegFallbacks(t *testing.T) {
	var r ImageReader
	if _, err := r.Decode([]byte("\xff\xd8\xff\xe0garbage")); err == nil {
		t.Error("garbage after a JPEG marker decoded")
	}
	data := jpegOf(t, 16, 16, false)
	bad := bytes.Clone(data)
	for i := len(bad) / 2; i < len(bad)-2; i++ {
		bad[i] = 0xff
	}
	r.Decode(bad) // libjpeg warns and fills, or fails: either is fine, a crash is not
}

func BenchmarkDecodeJPEG256(b *testing.B) {
	data := jpegOf(b, 256, 256, false)
	b.Run("libjpeg", func(b *testing.B) {
		var r ImageReader
		for b.Loop() {
			if _, err := r.Decode(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			img, err := jpeg.Decode(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			_, _, _, buf = ImagePixels(img, Color, buf)
		}
	})
}

// TestLibjpegAgainstOpenCV: JPEGs decode to OpenCV's pixels exactly (the
// same library, islow IDCT and fancy upsampling), in colour and grey,
// at sizes that end in partial 16-row groups and blocks, the grey ones
// from colour files too, as Caffe's ReadImageToCVMat decodes them.
func TestLibjpegAgainstOpenCV(t *testing.T) {
	dir := t.TempDir()
	type job struct {
		data []byte
		mode ColorMode
	}
	var jobs []job
	var args []string
	for _, c := range []struct {
		w, h int
		grey bool
	}{{37, 23, false}, {64, 48, false}, {256, 256, false}, {19, 301, false}, {1, 1, false}, {45, 33, true}} {
		data := jpegOf(t, c.w, c.h, c.grey)
		for _, mode := range []ColorMode{Color, Gray} {
			name := fmt.Sprintf("j%d", len(jobs))
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
			flag := map[ColorMode]string{Color: "color", Gray: "gray"}[mode]
			args = append(args, fmt.Sprintf("imdecode:%s:%s:%s.out", name, flag, name))
			jobs = append(jobs, job{data, mode})
		}
	}
	opencv(t, dir, args)
	for i, j := range jobs {
		want, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("j%d.out", i)))
		if err != nil {
			t.Fatal(err)
		}
		r := ImageReader{Mode: j.mode}
		got, err := r.Decode(j.data)
		if err != nil {
			t.Fatal(err)
		}
		if pix := interleave(got.Data, got.Channels); !bytes.Equal(pix, want) {
			worst, off := maxDiff(pix, want)
			t.Errorf("image %d (%dx%dx%d, mode %v): differs from OpenCV's by up to %d at byte %d", i, got.Channels, got.Height, got.Width, j.mode, worst, off)
		}
	}
}
