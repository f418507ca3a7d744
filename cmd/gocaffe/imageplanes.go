package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// imageToDatum is data.ImageToDatum with the same results, but fast for
// the image types Go's decoders return (JPEG: *image.YCbCr or *image.Gray;
// PNG: *image.NRGBA, *image.RGBA or *image.Gray). data.ImageToDatum reads
// each pixel through the image.Image interface, which allocates a
// color.Color per pixel and takes about twice as long as decoding the JPEG;
// here each pixel comes from the image type's own concrete accessor and
// goes through the same conversion (the concrete color's RGBA method, then
// color.GrayModel's formula), so the bytes are identical
// (TestImageToDatumMatchesData). Other image types go to
// data.ImageToDatum.
//
// It belongs in data.ImageToDatum itself, which the Data layer's decoding
// also uses; until it moves there, the dataset tools use it directly.
func imageToDatum(img image.Image, mode data.ColorMode) *caffepb.Datum {
	switch img.(type) {
	case *image.YCbCr, *image.NRGBA, *image.RGBA, *image.Gray:
	default:
		return data.ImageToDatum(img, mode)
	}
	if mode == data.Native {
		// Native keeps grey images grey; of the types handled here only
		// *image.Gray has a grey colour model.
		mode = data.Color
		if _, ok := img.(*image.Gray); ok {
			mode = data.Gray
		}
	}
	if m, ok := img.(*image.Gray); ok {
		return grayToDatum(m, mode)
	}
	bounds := img.Bounds()
	w, h := bounds.Dx(), bounds.Dy()
	plane := w * h
	channels := 3
	if mode == data.Gray {
		channels = 1
	}
	buf := make([]byte, channels*plane)
	// put stores one pixel's 16-bit r, g, b at index i.
	put := func(i int, r, g, b uint32) {
		if channels == 1 {
			// color.GrayModel's conversion.
			buf[i] = byte((19595*r + 38470*g + 7471*b + 1<<15) >> 24)
			return
		}
		buf[i], buf[plane+i], buf[2*plane+i] = byte(b>>8), byte(g>>8), byte(r>>8)
	}
	// One loop per type, so that each pixel is read without an interface
	// call or an allocation.
	for y := range h {
		py := bounds.Min.Y + y
		switch m := img.(type) {
		case *image.YCbCr:
			for x := range w {
				px := bounds.Min.X + x
				yi, ci := m.YOffset(px, py), m.COffset(px, py)
				r, g, b, _ := color.YCbCr{Y: m.Y[yi], Cb: m.Cb[ci], Cr: m.Cr[ci]}.RGBA()
				put(y*w+x, r, g, b)
			}
		case *image.NRGBA:
			row := m.Pix[m.PixOffset(bounds.Min.X, py):][:4*w]
			for x := range w {
				p := row[4*x : 4*x+4]
				r, g, b, _ := color.NRGBA{R: p[0], G: p[1], B: p[2], A: p[3]}.RGBA()
				put(y*w+x, r, g, b)
			}
		case *image.RGBA:
			row := m.Pix[m.PixOffset(bounds.Min.X, py):][:4*w]
			for x := range w {
				p := row[4*x : 4*x+4]
				r, g, b, _ := color.RGBA{R: p[0], G: p[1], B: p[2], A: p[3]}.RGBA()
				put(y*w+x, r, g, b)
			}
		}
	}
	return &caffepb.Datum{Channels: proto.Int32(int32(channels)), Height: proto.Int32(int32(h)), Width: proto.Int32(int32(w)), Data: buf}
}

// grayToDatum stores a grey image as one plane, or three equal ones in
// Color mode (a grey pixel's RGBA has r = g = b = y*0x101).
func grayToDatum(m *image.Gray, mode data.ColorMode) *caffepb.Datum {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	plane := w * h
	channels := 1
	if mode == data.Color {
		channels = 3
	}
	buf := make([]byte, channels*plane)
	for y := range h {
		row := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:w]
		for c := range channels {
			copy(buf[c*plane+y*w:], row)
		}
	}
	return &caffepb.Datum{Channels: proto.Int32(int32(channels)), Height: proto.Int32(int32(h)), Width: proto.Int32(int32(w)), Data: buf}
}

// decodeDatum is data.DecodeDatum through imageToDatum: an encoded datum's
// image as a raw datum with the same label; a raw datum as it is.
func decodeDatum(d *caffepb.Datum, mode data.ColorMode) (*caffepb.Datum, error) {
	if !d.GetEncoded() {
		return d, nil
	}
	img, _, err := image.Decode(bytes.NewReader(d.GetData()))
	if err != nil {
		return nil, fmt.Errorf("decoding an encoded datum (%d bytes): %w", len(d.GetData()), err)
	}
	out := imageToDatum(img, mode)
	out.Label = d.Label
	return out, nil
}
