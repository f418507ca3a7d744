package data

import (
	"bytes"
	"fmt"
	"image"

	"github.com/gocaffe/gocaffe/settings"
)

// DefaultMaxImagePixels is the largest image, in pixels, that gocaffe
// decodes unless told otherwise (settings.DefaultMaxImagePixels says
// why). A reader's MaxPixels, from the settings' MaxImagePixels
// (GOCAFFE_MAX_IMAGE_PIXELS for the gocaffe command), moves it.
const DefaultMaxImagePixels = settings.DefaultMaxImagePixels

// MaxImagePixelsEnv names the gocaffe command's variable that raises the
// cap, for messages.
const MaxImagePixelsEnv = "GOCAFFE_MAX_IMAGE_PIXELS"

// maxDatumBytes is the most pixel data one Datum can carry: protobuf's
// message limit (2 GiB - 1) less room for the other fields.
const maxDatumBytes = 1<<31 - 1 - 64

// CheckImageHeader reads only the header of an encoded image and refuses
// an image of more than maxPixels pixels (0 or less:
// DefaultMaxImagePixels) before any pixel memory is allocated.
func CheckImageHeader(encoded []byte, maxPixels int64) error {
	if w, h, _, ok := jpegFrame(encoded); ok { // the common case, without image.DecodeConfig's allocations
		return CheckImageSize("jpeg image", h, w, maxPixels)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(encoded))
	if err != nil {
		return err
	}
	return CheckImageSize(format+" image", cfg.Height, cfg.Width, maxPixels)
}

// CheckImageSize refuses an image (decoded, or a resize target) of height
// x width pixels over maxPixels (0 or less: DefaultMaxImagePixels), and
// one whose three
// colour planes could not fit in a Datum. what says what the size is of,
// for the message.
func CheckImageSize(what string, height, width int, maxPixels int64) error {
	if maxPixels <= 0 {
		maxPixels = DefaultMaxImagePixels
	}
	if height <= 0 || width <= 0 {
		return fmt.Errorf("%s of %dx%d pixels has no pixels", what, width, height)
	}
	px := int64(height) * int64(width)
	if px > maxPixels {
		return fmt.Errorf("%s of %dx%d pixels is over the limit of %d pixels (set %s, or the settings' MaxImagePixels, to allow more)", what, width, height, maxPixels, MaxImagePixelsEnv)
	}
	if 3*px > maxDatumBytes {
		return fmt.Errorf("%s of %dx%d pixels cannot be held in a Datum (protobuf's 2 GiB limit)", what, width, height)
	}
	return nil
}

// DecodeImage decodes an encoded image (JPEG, PNG, GIF) after checking its
// header against maxPixels (0 or less: DefaultMaxImagePixels), so that no
// image's pixels
// are allocated before its size is known to be allowed. Every decode of a
// user's image goes through it.
func DecodeImage(encoded []byte, maxPixels int64) (image.Image, error) {
	if err := CheckImageHeader(encoded, maxPixels); err != nil {
		return nil, err
	}
	img, _, err := image.Decode(bytes.NewReader(encoded))
	return img, err
}

// JPEGFrame reads a JPEG's width, height and number of components from
// its frame header without decoding it (see jpegFrame); ok is false when
// it does not find them plainly so.
func JPEGFrame(b []byte) (w, h, comps int, ok bool) { return jpegFrame(b) }

// jpegFrame reads a JPEG's size and number of components from its frame
// header (SOF0 to SOF15) without allocating; ok is false for anything it
// does not find plainly so (not a JPEG, truncated, a frame with its height
// given later), which image.DecodeConfig then reads or reports.
func jpegFrame(b []byte) (w, h, comps int, ok bool) {
	if len(b) < 4 || b[0] != 0xff || b[1] != 0xd8 {
		return 0, 0, 0, false
	}
	for i := 2; i+4 <= len(b); {
		if b[i] != 0xff {
			return 0, 0, 0, false
		}
		m := b[i+1]
		switch {
		case m == 0xff: // fill byte
			i++
			continue
		case m == 0x01 || (m >= 0xd0 && m <= 0xd8): // markers without a segment
			i += 2
			continue
		case m == 0xda || m == 0xd9: // scan or end before any frame
			return 0, 0, 0, false
		}
		n := int(b[i+2])<<8 | int(b[i+3])
		if n < 2 || i+2+n > len(b) {
			return 0, 0, 0, false
		}
		if m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc {
			if n < 8 {
				return 0, 0, 0, false
			}
			seg := b[i+4:]
			h, w, comps = int(seg[1])<<8|int(seg[2]), int(seg[3])<<8|int(seg[4]), int(seg[5])
			return w, h, comps, h > 0 && w > 0 && comps > 0
		}
		i += 2 + n
	}
	return 0, 0, 0, false
}
