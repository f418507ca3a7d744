package layer_test

import (
	"fmt"
	"image"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// runSourceOn builds a data layer from text with the given seed, on dev
// (nil: the CPU), prepares it (MemoryData's Reset), and returns copies of
// its tops over n forward passes. On the GPU it also checks that Forward
// left the data on the device (a device-side copy, not a host one). The
// layer is closed before returning: LevelDB admits one reader at a time.
func runSourceOn[T layer.Float](t *testing.T, text string, seed uint64, dev *cuda.Device, n int, prepare func(layer.Layer[T])) [][][]T {
	t.Helper()
	l := layertest.New[T](t, text)
	l.LayerBase().SetRNG(mathfn.NewRNG(seed))
	top := layertest.Blobs[T](t, 2)
	if dev != nil {
		l.LayerBase().SetContext(device.New(dev))
		for _, b := range top {
			b.SetDevice(dev)
		}
	}
	layertest.SetUp(t, l, nil, top)
	if c, ok := l.(closer); ok {
		defer func() {
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
	}
	if prepare != nil {
		prepare(l)
	}
	_, prefetching := l.(closer)
	var out [][][]T
	for pass := range n {
		layertest.Forward(t, l, nil, top)
		if dev != nil && prefetching {
			if h := top[0].Data().Head(); h != syncedmem.HeadAtGPU {
				t.Fatalf("pass %d: after a GPU forward the data top's head is %v, want HEAD_AT_GPU", pass, h)
			}
		}
		out = append(out, [][]T{slices.Clone(top[0].CPUData()), slices.Clone(top[1].CPUData())})
	}
	return out
}

// checkSourceParity compares CPU and GPU runs of the same layer and seed.
func checkSourceParity[T layer.Float](t *testing.T, text string, prepare func(layer.Layer[T])) {
	t.Helper()
	dev := cudatest.Device(t)
	const seed, passes = 77, 6
	cpu := runSourceOn(t, text, seed, nil, passes, prepare)
	gpu := runSourceOn(t, text, seed, dev, passes, prepare)
	for i := range cpu {
		for k := range cpu[i] {
			layertest.CheckClose(t, fmt.Sprintf("pass %d top %d", i, k), gpu[i][k], cpu[i][k], 0)
		}
	}
}

// TestDataLayersGPUParity: in GPU mode (pinned batches pushed on the
// prefetch stream, device copies in Forward) the Data, ImageData,
// AnnotatedData, VideoData and MemoryData layers produce what they produce on the CPU, batch for batch,
// random crops, mirrors and shuffles included.
func TestDataLayersGPUParity(t *testing.T) {
	raw := writeDatums(t, numbered(7, 3, 8, 8))
	var encoded []*caffepb.Datum
	for i := range 5 {
		encoded = append(encoded, &caffepb.Datum{Data: encodePNG(t, colorImage(6, 5, byte(30*i))), Encoded: proto.Bool(true), Label: proto.Int32(int32(i))})
	}
	enc := writeDatums(t, encoded)
	var imgs []image.Image
	for i := range 5 {
		imgs = append(imgs, colorImage(5+i, 4, byte(40*i)))
	}
	root, list := writeImageList(t, imgs)
	transform := `transform_param { crop_size: 5 mirror: true mean_value: 3 mean_value: 4 mean_value: 5 scale: 0.5 }`
	var annotatedRecs []*caffepb.AnnotatedDatum
	for i, d := range numbered(6, 3, 12, 10) {
		annotatedRecs = append(annotatedRecs, annotated(d, group(int32(1+i%2), [5]float32{0.1, 0.2, 0.6, 0.7, 0}), group(3, [5]float32{0.5, 0.5, 0.9, 1, 1})))
	}
	anno := writeAnnotated(t, annotatedRecs)
	videos := writeVideos(t, 3, 9, false)
	texts := map[string]string{
		"AnnotatedData": annotatedText(anno, 2, `mirror: true mean_value: 5 resize_param { height: 8 width: 8 interp_mode: LINEAR interp_mode: CUBIC }
			expand_param { prob: 0.5 max_expand_ratio: 2 } distort_param { brightness_prob: 0.5 brightness_delta: 20 }`,
			`annotated_data_param { batch_sampler { sampler { min_scale: 0.5 max_scale: 1 } sample_constraint { min_jaccard_overlap: 0.1 } max_trials: 10 max_sample: 1 } }`),
		"VideoData": fmt.Sprintf(`type: "VideoData" video_data_param { source: "%s" batch_size: 2 shuffle: true num_segments: 3 new_length: 2
			modality: RGB name_pattern: "img_%%05d.png" } transform_param { crop_size: 3 mirror: true mean_value: 10 }`, videos),
		"Data/prefetch4": dataText(raw, "batch_size: 3 prefetch: 4", transform),
		"Data/prefetch0": dataText(raw, "batch_size: 3 prefetch: 0", transform),
		"Data/encoded":   dataText(enc, "batch_size: 2", `transform_param { crop_size: 4 mirror: true }`),
		"ImageData":      imageDataText(root, list, "batch_size: 2 shuffle: true new_height: 6 new_width: 7", `transform_param { crop_size: 5 mirror: true }`),
	}
	for name, text := range texts {
		t.Run(name+"/float32", func(t *testing.T) { checkSourceParity[float32](t, text, nil) })
		t.Run(name+"/float64", func(t *testing.T) { checkSourceParity[float64](t, text, nil) })
	}
	t.Run("MemoryData", func(t *testing.T) {
		items, labels := make([]float32, 6*3), []float32{1, 2, 3, 4, 5, 6}
		for i := range items {
			items[i] = float32(i) / 3
		}
		reset := func(l layer.Layer[float32]) {
			if err := l.(*layer.MemoryData[float32]).Reset(items, labels, 6); err != nil {
				t.Fatal(err)
			}
		}
		checkSourceParity(t, memoryText, reset)
	})
}
