package datalayer_test

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/badinput"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/settings"
)

// The image layers take the pixel cap from their context's settings
// (MaxImagePixels, GOCAFFE_MAX_IMAGE_PIXELS for the command), not from the
// environment: a 7x5 image passes a cap of 35 and is refused under one of
// 34, for ImageData (the reader) and for Data's encoded datums (the
// transformer's decoder and the loaders'), with and without prefetching;
// two contexts in one process keep their own caps.
func TestImageCapFromContextSettings(t *testing.T) {
	small := badinput.PNGBomb(7, 5) // 35 pixels
	dir := t.TempDir()
	img := filepath.Join(dir, "small.png")
	if err := os.WriteFile(img, small, 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte(img+" 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	encoded := writeDatums(t, []*caffepb.Datum{{Data: small, Encoded: proto.Bool(true), Label: proto.Int32(1)}})
	texts := map[string]string{
		"ImageData":     `type: "ImageData" image_data_param { source: "` + list + `" batch_size: 1 }`,
		"Data":          dataText(encoded, "batch_size: 1 prefetch: 0", ""),
		"Data_prefetch": dataText(encoded, "batch_size: 1 prefetch: 2", ""),
		"Data_crop":     dataText(encoded, "batch_size: 1 prefetch: 0", "transform_param { crop_size: 3 }"),
	}
	run := func(text string, maxPixels int64) error {
		ctx := device.New(nil)
		ctx.SetSettings(settings.Settings{MaxImagePixels: maxPixels})
		l := layertest.New[float32](t, text)
		l.LayerBase().SetContext(ctx)
		top := layertest.Blobs[float32](t, 2)
		err := layer.SetUp(l, nil, top)
		if c, ok := l.(closer); ok {
			defer c.Close()
		}
		for range 2 {
			if err != nil {
				break
			}
			_, err = layer.Forward(l, nil, top)
		}
		return err
	}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			if err := run(text, 35); err != nil {
				t.Errorf("a 7x5 image under a cap of 35: %v", err)
			}
			if err := run(text, 0); err != nil {
				t.Errorf("a 7x5 image under the default cap: %v", err)
			}
			wantError(t, "cap 34", run(text, 34), "7x5 pixels is over the limit of 34 pixels", "GOCAFFE_MAX_IMAGE_PIXELS")
		})
	}
}
