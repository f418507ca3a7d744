package data

import (
	"bytes"
	"fmt"
	"image"
	"image/color"

	"github.com/gocaffe/gocaffe/internal/fileio"
)

// ImagePixels writes an image's pixels in Caffe's raw datum layout
// (channel-major; B, G, R for colour, as OpenCV gives them) into buf,
// reusing its backing array when it is large enough, and returns the shape
// and the pixels. Native mode keeps grayscale images at one channel.
//
// The image types the standard decoders return (*image.YCbCr from JPEG,
// *image.Gray, *image.RGBA and *image.NRGBA from PNG) are read from their
// pixel arrays: going through img.At boxes every pixel in an interface and
// is several times slower. The values are those img.At gives, except that
// a YCbCr image made gray keeps its luma plane, which is what libjpeg (and
// so Caffe's OpenCV) decodes a JPEG to in grayscale.
func ImagePixels(img image.Image, mode ColorMode, buf []byte) (c, h, w int, pix []byte) {
	b := img.Bounds()
	w, h = b.Dx(), b.Dy()
	c = 3
	if mode == Gray || (mode == Native && isGray(img)) {
		c = 1
	}
	if cap(buf) < c*w*h {
		buf = make([]byte, c*w*h)
	}
	pix = buf[:c*w*h]
	if b.Min.X < 0 || b.Min.Y < 0 || !fastPixels(img, c, pix) {
		genericPixels(img, c, pix)
	}
	return c, h, w, pix
}

func isGray(img image.Image) bool {
	switch img.ColorModel() {
	case color.GrayModel, color.Gray16Model:
		return true
	}
	return false
}

// fastPixels handles the common concrete image types; it reports false for
// the others.
func fastPixels(img image.Image, c int, pix []byte) bool {
	switch m := img.(type) {
	case *image.YCbCr:
		ycbcrPixels(m, c, pix)
	case *image.Gray:
		grayPixels(m, c, pix)
	case *image.RGBA:
		rgbaPixels(m.Pix, m.Stride, m.Rect, c, pix, rgbaColor)
	case *image.NRGBA:
		rgbaPixels(m.Pix, m.Stride, m.Rect, c, pix, nrgbaColor)
	default:
		return false
	}
	return true
}

// genericPixels reads any image through At.
func genericPixels(img image.Image, c int, pix []byte) {
	b := img.Bounds()
	w, plane := b.Dx(), b.Dx()*b.Dy()
	for y := range b.Dy() {
		for x := range w {
			r, g, bl := straightRGB(img.At(b.Min.X+x, b.Min.Y+y))
			putPixel(pix, c, plane, y*w+x, r, g, bl)
		}
	}
}

// straightRGB returns a colour's 16-bit components with no alpha applied.
// Caffe reads images with OpenCV's imread, which drops a PNG's alpha
// channel and keeps the stored colour; Go's RGBA method would instead
// premultiply it (a transparent pixel would come out black). Colours with
// straight alpha (NRGBA, NRGBA64: PNGs with alpha, and paletted PNGs with
// transparency) are read as stored; the others are opaque or premultiplied
// by nature.
func straightRGB(c color.Color) (r, g, b uint32) {
	switch v := c.(type) {
	case color.NRGBA:
		return uint32(v.R) * 0x101, uint32(v.G) * 0x101, uint32(v.B) * 0x101
	case color.NRGBA64:
		return uint32(v.R), uint32(v.G), uint32(v.B)
	}
	r, g, b, _ = c.RGBA()
	return r, g, b
}

// putPixel stores 16-bit colour components at index i, as B, G, R planes
// or as one gray plane (color.GrayModel's conversion).
func putPixel(pix []byte, c, plane, i int, r, g, b uint32) {
	if c == 1 {
		pix[i] = byte((19595*r + 38470*g + 7471*b + 1<<15) >> 24)
		return
	}
	pix[i], pix[plane+i], pix[2*plane+i] = byte(b>>8), byte(g>>8), byte(r>>8)
}

func ycbcrPixels(m *image.YCbCr, c int, pix []byte) {
	b := m.Rect
	w, plane := b.Dx(), b.Dx()*b.Dy()
	if c == 1 {
		for y := range b.Dy() {
			yi := m.YOffset(b.Min.X, b.Min.Y+y)
			copy(pix[y*w:(y+1)*w], m.Y[yi:yi+w])
		}
		return
	}
	// Chroma subsampling as shifts of the coordinates (COffset's formula
	// for non-negative coordinates), so no division per pixel. Rows are
	// sliced to their exact length so the compiler drops bounds checks.
	// The arithmetic is color.YCbCrToRGB's (the JFIF coefficients scaled
	// by 2^16), written out because that function is too large to inline
	// and a call per pixel costs a third of the conversion time; it gives
	// exactly the high bytes of YCbCr.RGBA, what At gives.
	sx, sy := chromaShifts(m.SubsampleRatio)
	cx0 := b.Min.X >> sx
	cw := (b.Max.X-1)>>sx - cx0 + 1
	for y := range b.Dy() {
		Y := b.Min.Y + y
		yi := m.YOffset(b.Min.X, Y)
		ci := (Y>>sy - b.Min.Y>>sy) * m.CStride
		yRow := m.Y[yi : yi+w]
		cbRow, crRow := m.Cb[ci:ci+cw], m.Cr[ci:ci+cw]
		bp, gp, rp := pix[y*w:(y+1)*w], pix[plane+y*w:plane+(y+1)*w], pix[2*plane+y*w:2*plane+(y+1)*w]
		for x, yv := range yRow {
			c := (b.Min.X+x)>>sx - cx0
			yy := int32(yv) * 0x10101
			cb, cr := int32(cbRow[c])-128, int32(crRow[c])-128
			bp[x] = clampShift16(yy + 116130*cb)
			gp[x] = clampShift16(yy - 22554*cb - 46802*cr)
			rp[x] = clampShift16(yy + 91881*cr)
		}
	}
}

// clampShift16 is v >> 16 clamped to [0, 255].
func clampShift16(v int32) uint8 {
	if uint32(v)&0xff000000 == 0 {
		return uint8(v >> 16)
	}
	return uint8(^(v >> 31)) // 0 below the range, 255 above
}

// chromaShifts returns log2 of the horizontal and vertical chroma
// subsampling factors.
func chromaShifts(r image.YCbCrSubsampleRatio) (sx, sy int) {
	switch r {
	case image.YCbCrSubsampleRatio422:
		return 1, 0
	case image.YCbCrSubsampleRatio420:
		return 1, 1
	case image.YCbCrSubsampleRatio440:
		return 0, 1
	case image.YCbCrSubsampleRatio411:
		return 2, 0
	case image.YCbCrSubsampleRatio410:
		return 2, 1
	}
	return 0, 0
}

func grayPixels(m *image.Gray, c int, pix []byte) {
	b := m.Rect
	w, plane := b.Dx(), b.Dx()*b.Dy()
	for y := range b.Dy() {
		row := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:w]
		for k := range c { // gray in every channel
			copy(pix[k*plane+y*w:], row)
		}
	}
}

func rgbaColor(p []byte) (r, g, b uint32) {
	r, g, b, _ = color.RGBA{p[0], p[1], p[2], p[3]}.RGBA()
	return r, g, b
}

// nrgbaColor is the stored colour of a straight-alpha pixel, alpha dropped
// (see straightRGB).
func nrgbaColor(p []byte) (r, g, b uint32) {
	return uint32(p[0]) * 0x101, uint32(p[1]) * 0x101, uint32(p[2]) * 0x101
}

// rgbaPixels reads 4-byte-per-pixel images; conv gives the pixel's 16-bit
// colour as straightRGB gives the image's At.
func rgbaPixels(src []byte, stride int, b image.Rectangle, c int, pix []byte, conv func([]byte) (r, g, b uint32)) {
	w, plane := b.Dx(), b.Dx()*b.Dy()
	for y := range b.Dy() {
		row := src[y*stride:]
		for x := range w {
			r, g, bl := conv(row[4*x : 4*x+4])
			putPixel(pix, c, plane, y*w+x, r, g, bl)
		}
	}
}

// ImageReader reads image files (JPEG, PNG, GIF) into Caffe's raw datum
// layout, as Caffe's ReadImageToCVMat does for the ImageData layer:
// decoded in colour or grayscale (Mode) and, when Height and Width are both
// positive, resized to that size with bilinear interpolation. It reuses its
// buffers, so a record it returns is valid until the next Read.
type ImageReader struct {
	Mode          ColorMode
	Height, Width int
	// MaxPixels caps the size of an image it decodes (0 or less:
	// DefaultMaxImagePixels; a layer sets its context's MaxImagePixels
	// setting); the header is checked before any pixel memory is
	// allocated.
	MaxPixels int64

	file    []byte
	pix     []byte
	row     []byte // libjpeg's scanline
	resized []byte
	rs      Resizer
}

// Read reads the image file at path. Errors name the path.
func (r *ImageReader) Read(path string) (DatumRecord, error) {
	// An encoded image must fit in a Datum, so protobuf's limit bounds the file.
	b, err := fileio.ReadFileInto(r.file, path, fileio.ProtoLimit)
	if err != nil {
		return DatumRecord{}, fmt.Errorf("could not read image: %w", err)
	}
	r.file = b
	rec, err := r.Decode(r.file)
	if err != nil {
		return DatumRecord{}, fmt.Errorf("could not decode image %s: %w", path, err)
	}
	return rec, nil
}

// decodeJPEG, set by the libjpeg build tag, decodes a JPEG straight into
// planes (buf and row are reused scratch); ok false leaves the image to
// Go's decoders.
var decodeJPEG func(encoded []byte, mode ColorMode, buf, row []byte) (c, h, w int, pix, rowOut []byte, ok bool, err error)

// Decode decodes an encoded image (the bytes of a file) as Read does.
func (r *ImageReader) Decode(encoded []byte) (DatumRecord, error) {
	c, h, w, pix, err := r.decodePlanes(encoded)
	if err != nil {
		return DatumRecord{}, err
	}
	if r.Height > 0 && r.Width > 0 && (r.Height != h || r.Width != w) {
		if err := CheckImageSize("resize target", r.Height, r.Width, r.MaxPixels); err != nil {
			return DatumRecord{}, err
		}
		resized, err := r.rs.Resize(r.resized, pix, c, h, w, r.Height, r.Width)
		if err != nil {
			return DatumRecord{}, err
		}
		r.resized = resized
		pix, h, w = resized, r.Height, r.Width
	}
	return DatumRecord{Channels: c, Height: h, Width: w, Data: pix}, nil
}

// decodePlanes decodes an image into r.pix as planes, after checking its
// size against the cap.
func (r *ImageReader) decodePlanes(encoded []byte) (c, h, w int, pix []byte, err error) {
	if err := CheckImageHeader(encoded, r.MaxPixels); err != nil {
		return 0, 0, 0, nil, err
	}
	if decodeJPEG != nil {
		var ok bool
		c, h, w, r.pix, r.row, ok, err = decodeJPEG(encoded, r.Mode, r.pix, r.row)
		if ok {
			return c, h, w, r.pix, err
		}
	}
	img, _, err := image.Decode(bytes.NewReader(encoded))
	if err != nil {
		return 0, 0, 0, nil, err
	}
	c, h, w, r.pix = ImagePixels(img, r.Mode, r.pix)
	return c, h, w, r.pix, nil
}
