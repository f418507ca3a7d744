package datalayer_test

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
)

// writeWindowImage writes a 40x30 PNG whose pixel (x, y) is
// (R, G, B) = (6x, 8y, b).
func writeWindowImage(t *testing.T, path string, b uint8) {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 40, 30))
	for y := range 30 {
		for x := range 40 {
			img.Set(x, y, color.NRGBA{uint8(6 * x), uint8(8 * y), b, 255})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

func windowLayer(t *testing.T, dir, windows, extra string, windowExtra ...string) (layer.Layer[float64], []*blob.Blob[float64], error) {
	t.Helper()
	src := filepath.Join(dir, "windows.txt")
	os.WriteFile(src, []byte(windows), 0o644)
	l := layertest.New[float64](t, `type: "WindowData" top: "data" top: "label" `+extra+`
		window_data_param { source: "`+src+`" root_folder: "`+dir+`/" batch_size: 4 fg_fraction: 0.5 `+strings.Join(windowExtra, " ")+` }`)
	top := layertest.Blobs[float64](t, 2)
	return l, top, layer.SetUp(l, nil, top)
}

// Windows of the crop size are copied pixel for pixel (B, G, R planes),
// mirrored or not; background windows come first, with label 0.
func TestWindowData(t *testing.T) {
	dir := t.TempDir()
	writeWindowImage(t, filepath.Join(dir, "a.png"), 50)
	writeWindowImage(t, filepath.Join(dir, "b.png"), 90)
	windows := "# 0\na.png\n3 30 40\n2\n4 0.7 2 3 9 10\n0 0.1 20 10 27 17\n# 1\nb.png\n3 30 40\n1\n0 0.3 30 20 37 27\n"
	l, top, err := windowLayer(t, dir, windows, `transform_param { crop_size: 8 mirror: true }`)
	if err != nil {
		t.Fatal(err)
	}
	mirrored := map[bool]int{}
	for range 5 {
		layertest.Forward(t, l, nil, top)
		labels := top[1].CPUData()
		if labels[0] != 0 || labels[1] != 0 || labels[2] != 4 || labels[3] != 4 {
			t.Fatalf("labels %v, want [0 0 4 4]", labels)
		}
		for item := range 4 {
			x := top[0].CPUData()[item*3*64 : (item+1)*3*64]
			blue := x[0]
			var x0, y0 int
			switch {
			case item >= 2:
				x0, y0 = 2, 3
			case blue == 50:
				x0, y0 = 20, 10
			default:
				x0, y0 = 30, 20
			}
			plain, flipped := true, true
			for h := range 8 {
				for w := range 8 {
					want := []float64{blue, float64(8 * (y0 + h)), float64(6 * (x0 + w))}
					wantFlip := []float64{blue, float64(8 * (y0 + h)), float64(6 * (x0 + 7 - w))}
					for c := range 3 {
						got := x[(c*8+h)*8+w]
						plain = plain && got == want[c]
						flipped = flipped && got == wantFlip[c]
					}
				}
			}
			if !plain && !flipped {
				t.Fatalf("item %d is neither the window nor its mirror image: %v", item, x[:8])
			}
			mirrored[flipped]++
		}
	}
	if mirrored[true] == 0 || mirrored[false] == 0 {
		t.Errorf("mirror: %v", mirrored)
	}
	// Context padding and square crops still fill crop_size x crop_size,
	// with mean and scale applied.
	l, top, err = windowLayer(t, dir, windows, `transform_param { crop_size: 12 mean_value: 100 mean_value: 50 mean_value: 0 }`,
		`context_pad: 2 crop_mode: "square" scale: 0.5`)
	if err != nil {
		t.Fatal(err)
	}
	layertest.Forward(t, l, nil, top)
	if got := top[0].CPUData()[2*3*144]; got != (50-100)*0.5 && got != 0 {
		t.Errorf("mean and scale: %v", got)
	}
	for file, want := range map[string]string{
		"# 0\na.png\n3 30 40\n1\n0 0.9 2 3 9 10\n":                      "foreground classes must be positive",
		"# 0\na.png\n3 30 40\n2\n1 0.9 2 3 9 10\n":                      "ends where class index was expected",
		"# 0\na.png\n3 30 40\n1\n1 0.9 2 3 9 10\n":                      "needs foreground and background windows",
		"0\na.png\n3 30 40\n1\n1 0.9 2 3 9 10\n":                        "expected '#'",
		"# 0\na.png\n3 30 40\n2\n1 0.9 2 3 9 45\n0 0.1 1 1 8 8\n":       "",
		"# 0\nmissing.png\n3 30 40\n2\n1 0.9 2 3 9 10\n0 0.1 1 1 8 8\n": "",
	} {
		l, top, err := windowLayer(t, dir, file, `transform_param { crop_size: 8 }`)
		if want != "" {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%q: err = %v, want %q", file, err, want)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := layer.Forward(l, nil, top); err == nil {
			t.Errorf("%q: a bad window or image loaded", file)
		}
	}
}
