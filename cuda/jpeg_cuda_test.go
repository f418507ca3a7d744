//go:build cuda

package cuda_test

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/settings"
)

// photoJPEG is a w x h JPEG (quality 90; 4:2:0 colour or one grey
// component) of smooth gradients with noise, and the image it encodes.
func photoJPEG(t testing.TB, w, h int, seed uint64, gray bool) ([]byte, image.Image) {
	rng := rand.New(rand.NewPCG(seed, 9))
	fx, fy, ph := rng.Float64()*0.05, rng.Float64()*0.05, rng.Float64()*6
	v := func(x, y int, k float64) uint8 {
		return uint8(max(0, min(255, 127+100*math.Sin(fx*float64(x)*k+fy*float64(y)+ph+k)+8*rng.NormFloat64())))
	}
	var img image.Image
	if gray {
		g := image.NewGray(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				g.SetGray(x, y, color.Gray{v(x, y, 1)})
			}
		}
		img = g
	} else {
		c := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				c.Set(x, y, color.RGBA{v(x, y, 1), v(x, y, 1.7), v(x, y, 2.3), 255})
			}
		}
		img = c
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	dec, err := jpeg.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), dec
}

// TestJPEGDecodeBatch: nvJPEG decodes a batch of colour JPEGs into planes
// of blue, green and red, and grey ones into one plane, each image at its
// slot, within a few levels of Go's decoder; a corrupt JPEG is an error
// wrapping ErrJPEGUnsupported.
func TestJPEGDecodeBatch(t *testing.T) {
	d := cudatest.Device(t)
	dec, err := d.NewJPEGDecoder(settings.NVJPEGHardware)
	if errors.Is(err, cuda.ErrNoNVJPEG) {
		t.Skipf("no nvJPEG: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	const n, w, h = 5, 37, 29
	for _, gray := range []bool{false, true} {
		t.Run(fmt.Sprintf("gray=%v", gray), func(t *testing.T) {
			c := 3
			if gray {
				c = 1
			}
			var encoded [][]byte
			var want []image.Image
			for i := range n {
				e, img := photoJPEG(t, w, h, uint64(i), gray)
				encoded, want = append(encoded, e), append(want, img)
			}
			out, err := d.Alloc(n * c * h * w)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Free(out)
			if err := dec.DecodeBatch(encoded, h, w, c, out, d.Stream()); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, n*c*h*w)
			if err := d.CopyDtoH(got, out); err != nil {
				t.Fatal(err)
			}
			worst := 0
			for i, img := range want {
				for y := range h {
					for x := range w {
						r, g, b, _ := img.At(x, y).RGBA()
						ref := []uint32{b >> 8, g >> 8, r >> 8}
						if gray {
							ref = ref[:1]
						}
						for k, v := range ref {
							worst = max(worst, abs(int(got[((i*c+k)*h+y)*w+x])-int(v)))
						}
					}
				}
			}
			t.Logf("largest difference from Go's decoder: %d levels (hardware: %v)", worst, dec.Hardware())
			if worst > 8 {
				t.Errorf("nvJPEG's planes differ from Go's decoder by up to %d levels: want at most 8 (planes in the wrong order or place?)", worst)
			}
		})
	}
	t.Run("corrupt", func(t *testing.T) {
		e, _ := photoJPEG(t, w, h, 1, false)
		out, err := d.Alloc(3 * h * w)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Free(out)
		err = dec.DecodeBatch([][]byte{e[:len(e)/3]}, h, w, 3, out, d.Stream())
		if !errors.Is(err, cuda.ErrJPEGUnsupported) {
			t.Errorf("a truncated JPEG: got %v, want an error wrapping ErrJPEGUnsupported", err)
		}
	})
}

func abs(v int) int { return max(v, -v) }

// BenchmarkJPEGDecodeBatch decodes batches of 256 photo-like 256x256
// JPEGs (about 35 KB each): the host's time in DecodeBatch, and the whole
// decoding to the stream's end, with and without the hardware backend's
// check of each image.
func BenchmarkJPEGDecodeBatch(b *testing.B) {
	d := cudatest.Device(b)
	const n, size = 256, 256
	var encoded [][]byte
	for i := range n {
		e, _ := photoJPEG(b, size, size, uint64(i), false)
		encoded = append(encoded, e)
	}
	out, err := d.Alloc(n * 3 * size * size)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Free(out)
	for _, check := range []bool{true, false} {
		b.Run(fmt.Sprintf("check=%v", check), func(b *testing.B) {
			dec, err := d.NewJPEGDecoder(settings.NVJPEGHardware)
			if err != nil {
				b.Skip(err)
			}
			defer dec.Close()
			if !check {
				cuda.SkipJPEGCheck(dec)
			}
			var host time.Duration
			for b.Loop() {
				start := time.Now()
				if err := dec.DecodeBatch(encoded, size, size, 3, out, d.Stream()); err != nil {
					b.Fatal(err)
				}
				host += time.Since(start)
				if err := d.Stream().Synchronize(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "images/s")
			b.ReportMetric(host.Seconds()*1e3/float64(b.N), "host-ms/batch")
		})
	}
}
