package datalayer_test

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/layer/datalayer"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/settings"
)

// smoothJPEG is a JPEG (baseline, 4:2:0 for colour, as Go's encoder and
// most cameras write) of a w x h image of smooth gradients with mild
// noise: grey (one component) or colour.
func smoothJPEG(t *testing.T, w, h, seed int, gray bool) []byte {
	t.Helper()
	var img image.Image
	if gray {
		g := image.NewGray(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				g.SetGray(x, y, color.Gray{byte(40 + 3*x + 2*y + (x*y+seed)%5)})
			}
		}
		img = g
	} else {
		c := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				v := func(k float64) byte {
					return byte(128 + 90*math.Sin(0.07*k*float64(x)+0.05*float64(y)+float64(seed)) + float64((x+y*seed)%7))
				}
				c.Set(x, y, color.RGBA{v(1), v(1.6), v(2.3), 255})
			}
		}
		img = c
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDeviceJPEGGPU: with the JPEG setting nvjpeg (GOCAFFE_JPEG), a Data
// layer on the GPU
// decodes batches of JPEGs of one size with nvJPEG; its batches hold the
// CPU layer's labels, and its pixels are the CPU layer's with the same
// crops and mirrors, within what nvJPEG's rounding changes (a few levels:
// a wrong crop or mirror of these gradients differs by far more). Batches
// it cannot take (PNGs; JPEGs of several sizes) are decoded on the host
// and are the CPU's to the bit; a corrupt JPEG is an error naming its
// record; an unknown GOCAFFE_JPEG is an error naming the variable, and a
// JPEG setting with no word an error at set-up.
func TestDeviceJPEGGPU(t *testing.T) {
	dev := cudatest.Device(t)
	if d, err := dev.NewJPEGDecoder(settings.NVJPEGHardware); errors.Is(err, cuda.ErrNoNVJPEG) {
		t.Skipf("no nvJPEG: %v", err)
	} else if err != nil {
		t.Fatal(err)
	} else {
		t.Logf("nvJPEG hardware decoder: %v", d.Hardware())
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	nvjpeg := settings.Settings{JPEG: settings.JPEGNVJPEG}
	records := func(n int, size func(i int) (w, h int), gray bool, encode func(i, w, h int) []byte) string {
		var recs []*caffepb.Datum
		for i := range n {
			w, h := size(i)
			var b []byte
			if encode != nil {
				b = encode(i, w, h)
			} else {
				b = smoothJPEG(t, w, h, i, gray)
			}
			recs = append(recs, &caffepb.Datum{Data: b, Encoded: proto.Bool(true), Label: proto.Int32(int32(7 * i))})
		}
		return writeDatums(t, recs)
	}
	twoSizes := func(i int) (int, int) { // batches of 3: two of 40x32, then two of 48x44
		if i < 6 {
			return 40, 32
		}
		return 48, 44
	}
	oneSize := func(int) (int, int) { return 40, 32 }
	mixedSizes := func(i int) (int, int) { return 40 + 8*(i%2), 32 }
	png := func(i, w, h int) []byte { return encodePNG(t, colorImage(w, h, byte(20*i))) }
	const passes = 4
	cases := []struct {
		name, src, transform string
		decoded              int64 // batches nvJPEG decodes, of passes
	}{
		{"colour", records(12, twoSizes, false, nil), `transform_param { crop_size: 24 mirror: true mean_value: 104 mean_value: 117 mean_value: 123 scale: 0.5 }`, passes},
		{"colour_whole", records(12, oneSize, false, nil), `transform_param { mirror: true }`, passes},
		{"grey", records(12, twoSizes, true, nil), `transform_param { crop_size: 20 mirror: true mean_value: 64 }`, passes},
		{"sizes_mixed", records(12, mixedSizes, false, nil), `transform_param { crop_size: 24 mirror: true }`, 0},
		{"png", records(12, twoSizes, false, png), `transform_param { crop_size: 24 mirror: true }`, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := dataText(tc.src, "batch_size: 3 prefetch: 0", tc.transform)
			const seed = 5
			cpu := runSourceOn[float32](t, text, seed, nil, passes, nil, nil)
			var decoded int64
			gpu := runSourceWith(t, text, seed, dev, nvjpeg, passes, nil, func(l layer.Layer[float32]) { decoded = datalayer.DeviceDecoded(l) })
			if decoded != tc.decoded {
				t.Errorf("nvJPEG decoded %d batches of %d, want %d", decoded, passes, tc.decoded)
			}
			if tc.decoded == 0 {
				compareSourceRuns(t, gpu, cpu)
				return
			}
			scale := 1.0
			if strings.Contains(tc.transform, "scale: 0.5") {
				scale = 0.5
			}
			var worst, sum float64
			var n int
			for i := range cpu {
				if fmt.Sprint(gpu[i][1]) != fmt.Sprint(cpu[i][1]) {
					t.Errorf("pass %d: labels %v, want %v", i, gpu[i][1], cpu[i][1])
				}
				for j, want := range cpu[i][0] {
					d := math.Abs(float64(gpu[i][0][j]-want)) / scale
					worst, sum, n = max(worst, d), sum+d, n+1
				}
			}
			mean := sum / float64(n)
			t.Logf("nvJPEG against the host decoder: largest difference %.0f levels, mean %.3f", worst, mean)
			if worst > 16 || mean > 1 {
				t.Errorf("nvJPEG's pixels differ from the host's by up to %.0f levels, %.3f on average: want at most 16 and 1 (a crop or mirror gone wrong?)", worst, mean)
			}
		})
	}
	t.Run("corrupt", func(t *testing.T) {
		cut := func(i, w, h int) []byte {
			b := smoothJPEG(t, w, h, i, false)
			if i == 4 {
				return b[:len(b)/2]
			}
			return b
		}
		text := dataText(records(6, twoSizes, false, cut), "batch_size: 3 prefetch: 0", `transform_param { crop_size: 24 }`)
		err := forwardSourceErr(t, text, dev, nvjpeg, 2)
		if err == nil || !strings.Contains(err.Error(), "decoding an encoded datum") {
			t.Errorf("a truncated JPEG in the second batch: got %v, want an error decoding it", err)
		}
	})
	t.Run("unknown_value", func(t *testing.T) {
		_, err := settings.FromLookup(func(name string) (string, bool) { return "gpu", name == "GOCAFFE_JPEG" })
		if err == nil || !strings.Contains(err.Error(), "GOCAFFE_JPEG") {
			t.Errorf("GOCAFFE_JPEG=gpu: got %v, want an error naming the variable", err)
		}
		text := dataText(records(3, twoSizes, false, nil), "batch_size: 3 prefetch: 0", `transform_param { crop_size: 24 }`)
		err = forwardSourceErr(t, text, dev, settings.Settings{JPEG: 9}, 1)
		if err == nil || !strings.Contains(err.Error(), "JPEG setting") {
			t.Errorf("JPEG setting 9: got %v, want an error naming the setting", err)
		}
	})
}

// forwardSourceErr sets a data layer up on dev with the settings s and
// runs up to n forward passes, returning the first error of either.
func forwardSourceErr(t *testing.T, text string, dev *cuda.Device, s settings.Settings, n int) error {
	t.Helper()
	l := layertest.New[float32](t, text)
	ctx := device.New(dev)
	ctx.SetSettings(s)
	l.LayerBase().SetContext(ctx)
	top := layertest.Blobs[float32](t, 2)
	for _, b := range top {
		b.SetDevice(dev)
	}
	if c, ok := l.(closer); ok {
		defer c.Close()
	}
	if err := layer.SetUp(l, nil, top); err != nil {
		return err
	}
	for range n {
		if _, err := layer.Forward(l, nil, top); err != nil {
			return err
		}
	}
	return nil
}
