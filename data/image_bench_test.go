package data

import (
	"bytes"
	"image"
	"image/jpeg"
	"testing"
)

// jpegPhoto is a 256x256 colour JPEG (4:2:0, as image/jpeg and most
// cameras write) with gradients and noise.
func jpegPhoto(b *testing.B) []byte {
	src := noisyRGBA(256, 256, 9)
	for y := range 256 {
		for x := range 256 {
			i := src.PixOffset(x, y)
			src.Pix[i], src.Pix[i+1], src.Pix[i+2], src.Pix[i+3] = byte(x)+src.Pix[i]/16, byte(y)+src.Pix[i+1]/16, byte(x+y)/2, 255
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, src, &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkImagePixels compares the YCbCr fast path with the At path on a
// decoded 256x256 JPEG.
func BenchmarkImagePixels(b *testing.B) {
	img, err := jpeg.Decode(bytes.NewReader(jpegPhoto(b)))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 3*256*256)
	for _, c := range []struct {
		name string
		img  image.Image
	}{{"ycbcr_fast", img}, {"at_generic", opaque{img}}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				ImagePixels(c.img, Color, buf)
			}
		})
	}
}

// BenchmarkDecodeJPEG is the whole decode of a 256x256 colour JPEG into
// Caffe's BGR planes, as a Data layer does for each encoded datum.
func BenchmarkDecodeJPEG(b *testing.B) {
	enc := jpegPhoto(b)
	var r ImageReader
	r.Mode = Color
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		if _, err := r.Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}
