package datalayer_test

import (
	"bytes"
	"image"
	"image/jpeg"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// photoLike is a w x h colour image with smooth gradients and some noise,
// so that it compresses to a JPEG of a realistic size.
func photoLike(w, h int, seed uint64) *image.RGBA {
	rng := rand.New(rand.NewPCG(seed, 3))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	fx, fy := 1+rng.IntN(4), 1+rng.IntN(4)
	for y := range h {
		for x := range w {
			i := img.PixOffset(x, y)
			n := rng.IntN(24)
			img.Pix[i] = byte((x*fx + n) & 0xff)
			img.Pix[i+1] = byte((y*fy + n) & 0xff)
			img.Pix[i+2] = byte(((x+y)/2 + n) & 0xff)
			img.Pix[i+3] = 255
		}
	}
	return img
}

func jpegDatums(b *testing.B, n, size int) []*caffepb.Datum {
	out := make([]*caffepb.Datum, n)
	for i := range out {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, photoLike(size, size, uint64(i)), &jpeg.Options{Quality: 90}); err != nil {
			b.Fatal(err)
		}
		out[i] = &caffepb.Datum{Data: buf.Bytes(), Encoded: proto.Bool(true), Label: proto.Int32(int32(i % 1000))}
	}
	return out
}

// BenchmarkDataLayer measures the Data layer's throughput on the CPU with
// prefetching (the default 4 batches): MNIST-sized raw datums, and
// ImageNet-style 256x256 JPEG datums cropped to 227 and mirrored at random.
func BenchmarkDataLayer(b *testing.B) {
	cases := []struct {
		name      string
		datums    func(*testing.B) []*caffepb.Datum
		dataParam string
		transform string
		batchSize int
	}{
		{"mnist_1x28x28_batch64", func(*testing.B) []*caffepb.Datum { return numbered(10000, 1, 28, 28) },
			"batch_size: 64", `transform_param { scale: 0.00390625 }`, 64},
		{"jpeg_3x256x256_crop227_mirror_batch32", func(b *testing.B) []*caffepb.Datum { return jpegDatums(b, 256, 256) },
			"batch_size: 32", `transform_param { crop_size: 227 mirror: true mean_value: 104 mean_value: 117 mean_value: 123 }`, 32},
		// CaffeNet's training batch, as issue 16's data check feeds it.
		{"jpeg_3x256x256_crop227_mirror_batch256", func(b *testing.B) []*caffepb.Datum { return jpegDatums(b, 512, 256) },
			"batch_size: 256", `transform_param { crop_size: 227 mirror: true mean_value: 104 mean_value: 117 mean_value: 123 }`, 256},
	}
	for _, backend := range []caffepb.DataParameter_DB{caffepb.DataParameter_LMDB, caffepb.DataParameter_LEVELDB} {
		testBackend = backend
		for _, c := range cases {
			benchDataCase(b, backend.String()+"/"+c.name, writeDatums(b, c.datums(b)), c.dataParam, c.transform, c.batchSize)
		}
	}
	testBackend = caffepb.DataParameter_LEVELDB
}

// benchDataCase runs one Data layer throughput benchmark over src.
func benchDataCase(b *testing.B, name, src, dataParam, transform string, batchSize int) {
	b.Run(name, func(b *testing.B) {
		l, top := setUpSource[float32](b, dataText(src, dataParam, "phase: TRAIN "+transform), 1, 2)
		b.ResetTimer()
		for b.Loop() {
			if _, err := layer.Forward(l, nil, top); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "images/s")
		l.(interface{ Close() error }).Close()
	})
}
