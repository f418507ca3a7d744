package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// TestImageToDatumMatchesData checks that the fast conversion gives
// exactly data.ImageToDatum's bytes for every image type, subsampling and
// origin.
func TestImageToDatumMatchesData(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fill := func(b []byte) {
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
	}
	r := image.Rect(0, 0, 7, 5)
	var imgs []image.Image
	for _, ss := range []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422,
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410} {
		m := image.NewYCbCr(r, ss)
		fill(m.Y)
		fill(m.Cb)
		fill(m.Cr)
		imgs = append(imgs, m, m.SubImage(image.Rect(1, 1, 6, 4)))
	}
	nrgba, rgba, gray := image.NewNRGBA(r), image.NewRGBA(r), image.NewGray(r)
	fill(nrgba.Pix) // partial alpha included
	fill(gray.Pix)
	for i := 0; i < len(rgba.Pix); i += 4 {
		a := byte(rng.IntN(256))
		rgba.Pix[i], rgba.Pix[i+1], rgba.Pix[i+2], rgba.Pix[i+3] = a/2, a/3, a, a // premultiplied
	}
	pal := image.NewPaletted(r, color.Palette{color.Black, color.White, color.RGBA{200, 10, 30, 255}})
	for i := range pal.Pix {
		pal.Pix[i] = byte(rng.IntN(3))
	}
	g16 := image.NewGray16(r)
	fill(g16.Pix)
	imgs = append(imgs, nrgba, nrgba.SubImage(image.Rect(2, 1, 5, 5)), rgba, rgba.SubImage(image.Rect(0, 2, 7, 5)),
		gray, gray.SubImage(image.Rect(3, 0, 7, 3)), pal, g16)

	for _, img := range imgs {
		for _, mode := range []data.ColorMode{data.Color, data.Gray, data.Native} {
			want := data.ImageToDatum(img, mode)
			got := imageToDatum(img, mode)
			name := fmt.Sprintf("%T %v mode %d", img, img.Bounds(), mode)
			if ycc, ok := img.(*image.YCbCr); ok {
				name += " " + ycc.SubsampleRatio.String()
			}
			if !proto.Equal(got, want) {
				t.Errorf("%s: shape %dx%dx%d, want %dx%dx%d; bytes equal %v",
					name, got.GetChannels(), got.GetHeight(), got.GetWidth(), want.GetChannels(), want.GetHeight(), want.GetWidth(), bytes.Equal(got.GetData(), want.GetData()))
			}
		}
	}
}

func TestDecodeDatumMatchesData(t *testing.T) {
	grey := image.NewGray(image.Rect(0, 0, 3, 2))
	copy(grey.Pix, []byte{1, 2, 3, 4, 5, 6})
	for _, img := range []image.Image{testImage(4, 3, 9), grey} {
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		enc := &caffepb.Datum{Data: buf.Bytes(), Encoded: proto.Bool(true), Label: proto.Int32(4)}
		for _, mode := range []data.ColorMode{data.Native, data.Color, data.Gray} {
			want, err := data.DecodeDatum(enc, mode)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeDatum(enc, mode)
			if err != nil || !proto.Equal(got, want) {
				t.Errorf("%T mode %d: got %v (%v), want %v", img, mode, got, err, want)
			}
		}
	}
	raw := rawDatum(1, 1, 1, 7)
	if got, err := decodeDatum(raw, data.Native); got != raw || err != nil {
		t.Errorf("a raw datum was changed: %v, %v", got, err)
	}
	if _, err := decodeDatum(&caffepb.Datum{Data: []byte("junk"), Encoded: proto.Bool(true)}, data.Native); err == nil || !strings.Contains(err.Error(), "4 bytes") {
		t.Errorf("junk: %v", err)
	}
}
