package data

import (
	"bytes"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/badinput"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// TestImageCap: the header decides, before decoding, whether an image is
// within the cap; the reader's MaxPixels moves the cap, resize targets are
// held to it, and encoded Datums from a database are checked the same way.
func TestImageCap(t *testing.T) {
	small := badinput.PNGBomb(7, 5) // 35 pixels
	if _, err := (&ImageReader{MaxPixels: 35}).Decode(small); err != nil {
		t.Errorf("35 pixels under a cap of 35: %v", err)
	}
	_, err := (&ImageReader{MaxPixels: 34}).Decode(small)
	wantErr(t, "cap 34", err, "png image of 7x5 pixels is over the limit of 34 pixels", MaxImagePixelsEnv)
	_, err = (&ImageReader{MaxPixels: 35, Height: 100, Width: 100}).Decode(small)
	wantErr(t, "resize target", err, "resize target of 100x100 pixels is over the limit of 35")

	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.png")
	if err := os.WriteFile(bomb, badinput.PNGBomb(20000, 20000), 0o644); err != nil {
		t.Fatal(err)
	}
	var r ImageReader
	_, err = r.Read(bomb)
	wantErr(t, "bomb", err, bomb, "20000x20000 pixels is over the limit of 268435456")
	_, err = r.Read("/dev/zero")
	wantErr(t, "/dev/zero", err, "/dev/zero is not a regular file")

	d := &caffepb.Datum{Encoded: proto.Bool(true), Data: badinput.PNGBomb(20000, 20000)}
	_, err = DecodeDatum(d, Color, 0)
	wantErr(t, "encoded datum", err, "encoded datum", "over the limit")
	small35 := &caffepb.Datum{Encoded: proto.Bool(true), Data: small}
	if _, err := DecodeDatum(small35, Color, 35); err != nil {
		t.Errorf("an encoded datum of 35 pixels under a cap of 35: %v", err)
	}
	_, err = DecodeDatum(small35, Color, 34)
	wantErr(t, "encoded datum, cap 34", err, "over the limit of 34 pixels")
	tf, err := NewTransformer[float32](nil, caffepb.Phase_TRAIN, 1)
	if err != nil {
		t.Fatal(err)
	}
	if tf.MaxImagePixels() != 0 {
		t.Errorf("a new transformer's cap: %d, want 0 (the default)", tf.MaxImagePixels())
	}
	tf.SetMaxImagePixels(34)
	if tf.MaxImagePixels() != 34 {
		t.Errorf("the transformer's cap after SetMaxImagePixels(34): %d", tf.MaxImagePixels())
	}

	wantErr(t, "no pixels", CheckImageSize("image", 0, 5, 0), "has no pixels")
	wantErr(t, "datum limit", CheckImageSize("image", 40000, 40000, 1<<40), "cannot be held in a Datum")
}

func wantErr(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want %q", what, parts)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q lacks %q", what, err, p)
		}
	}
}

// jpegFrame reads the size image.DecodeConfig reads, for colour and grey
// JPEGs with and without extra segments, and declines what is not a plain
// JPEG frame.
func TestJPEGFrame(t *testing.T) {
	for _, c := range []struct {
		img   image.Image
		comps int
	}{{image.NewRGBA(image.Rect(0, 0, 37, 23)), 3}, {image.NewGray(image.Rect(0, 0, 5, 300)), 1}} {
		var b bytes.Buffer
		if err := jpeg.Encode(&b, c.img, nil); err != nil {
			t.Fatal(err)
		}
		data := b.Bytes()
		// An APP1 segment and fill bytes before the frame.
		withApp := append([]byte{0xff, 0xd8, 0xff, 0xff, 0xe1, 0, 6, 1, 2, 3, 4}, data[2:]...)
		for _, d := range [][]byte{data, withApp} {
			cfg, _, err := image.DecodeConfig(bytes.NewReader(d))
			if err != nil {
				t.Fatal(err)
			}
			w, h, comps, ok := jpegFrame(d)
			if !ok || w != cfg.Width || h != cfg.Height || comps != c.comps {
				t.Errorf("jpegFrame %dx%d %d comps %v, DecodeConfig %dx%d", w, h, comps, ok, cfg.Width, cfg.Height)
			}
		}
		for n := range len(data) {
			if _, _, _, ok := jpegFrame(data[:n]); ok && n < 20 {
				t.Errorf("a %d-byte prefix gave a frame", n)
			}
		}
	}
	for _, bad := range [][]byte{nil, {0xff, 0xd8}, []byte("\x89PNG\r\n"), {0xff, 0xd8, 0xff, 0xda, 0, 2}} {
		if _, _, _, ok := jpegFrame(bad); ok {
			t.Errorf("jpegFrame(%q) found a frame", bad)
		}
	}
}
