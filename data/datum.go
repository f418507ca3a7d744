package data

import (
	"fmt"
	"image"
	_ "image/gif" // registered for encoded datums and image lists
	_ "image/jpeg"
	_ "image/png"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// DatumShape returns a raw datum's (channels, height, width) after checking
// that its payload, bytes or float_data, holds exactly that many values.
// Encoded datums must be decoded first (DecodeDatum).
func DatumShape(d *caffepb.Datum) (c, h, w int, err error) {
	if d.GetEncoded() {
		return 0, 0, 0, fmt.Errorf("datum is encoded: decode it first")
	}
	return checkShape(int(d.GetChannels()), int(d.GetHeight()), int(d.GetWidth()), len(d.GetData()), len(d.GetFloatData()))
}

// DatumValues writes a raw datum's values, in its (c, h, w) order, into
// dst, which must hold channels*height*width values.
func DatumValues[T float32 | float64](d *caffepb.Datum, dst []T) error {
	c, h, w, err := DatumShape(d)
	if err != nil {
		return err
	}
	if len(dst) != c*h*w {
		return fmt.Errorf("datum of shape %dx%dx%d into %d values", c, h, w, len(dst))
	}
	if b := d.GetData(); len(b) > 0 {
		for i, v := range b {
			dst[i] = T(v)
		}
		return nil
	}
	for i, v := range d.GetFloatData() {
		dst[i] = T(v)
	}
	return nil
}

// ColorMode says how images become channels: as they are (Native: 1 for
// grayscale, 3 otherwise), or forced to 3 (Color) or 1 (Gray).
type ColorMode int

const (
	Native ColorMode = iota
	Color
	Gray
)

// DecodeDatum returns an encoded datum's image as a raw datum with the same
// label (channels in Caffe's B, G, R order, as OpenCV gives them); a raw
// datum is returned as it is. An image of more than maxPixels pixels (0 or
// less: DefaultMaxImagePixels) is refused from its header.
func DecodeDatum(d *caffepb.Datum, mode ColorMode, maxPixels int64) (*caffepb.Datum, error) {
	if !d.GetEncoded() {
		return d, nil
	}
	img, err := DecodeImage(d.GetData(), maxPixels)
	if err != nil {
		return nil, fmt.Errorf("decoding an encoded datum (%d bytes): %w", len(d.GetData()), err)
	}
	out := ImageToDatum(img, mode)
	out.Label = d.Label
	return out, nil
}

// ImageToDatum stores an image as a raw datum of bytes in Caffe's layout:
// channel-major, channels B, G, R for colour. Native mode keeps grayscale
// images at one channel.
func ImageToDatum(img image.Image, mode ColorMode) *caffepb.Datum {
	c, h, w, buf := ImagePixels(img, mode, nil)
	return &caffepb.Datum{Channels: i32(c), Height: i32(h), Width: i32(w), Data: buf}
}

func i32(v int) *int32 {
	x := int32(v)
	return &x
}
