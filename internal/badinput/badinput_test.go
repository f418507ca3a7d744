package badinput

import (
	"bytes"
	"image/png"
	"testing"
	"time"
)

func TestPNGBombIsValid(t *testing.T) {
	t0 := time.Now()
	b := PNGBomb(20000, 20000)
	t.Logf("%d bytes in %v", len(b), time.Since(t0))
	small := PNGBomb(7, 5)
	img, err := png.Decode(bytes.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 7 || img.Bounds().Dy() != 5 {
		t.Fatal(img.Bounds())
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil || cfg.Width != 20000 {
		t.Fatal(cfg, err)
	}
}
