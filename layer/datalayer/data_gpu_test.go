package datalayer_test

import (
	"fmt"
	"image"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gocaffe/gocaffe/layer/datalayer"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/layertest"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/settings"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// runSourceOn builds a data layer from text with the given seed, on dev
// (nil: the CPU), prepares it (MemoryData's Reset), and returns copies of
// its tops over n forward passes. On the GPU it also checks that Forward
// left the data on the device (a device-side copy, not a host one). The
// layer is closed before returning (LevelDB admits one reader at a time),
// after inspect, if not nil, looks at it.
func runSourceOn[T layer.Float](t *testing.T, text string, seed uint64, dev *cuda.Device, n int, prepare, inspect func(layer.Layer[T])) [][][]T {
	t.Helper()
	return runSourceWith(t, text, seed, dev, settings.Settings{}, n, prepare, inspect)
}

// runSourceWith is runSourceOn with the settings s on the GPU's context.
func runSourceWith[T layer.Float](t *testing.T, text string, seed uint64, dev *cuda.Device, s settings.Settings, n int, prepare, inspect func(layer.Layer[T])) [][][]T {
	t.Helper()
	l := layertest.New[T](t, text)
	l.LayerBase().SetRNG(mathfn.NewRNG(seed))
	top := layertest.Blobs[T](t, 2)
	if dev != nil {
		ctx := device.New(dev)
		ctx.SetSettings(s)
		l.LayerBase().SetContext(ctx)
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
	if inspect != nil {
		inspect(l)
	}
	return out
}

// checkSourceParity compares CPU and GPU runs of the same layer and seed.
func checkSourceParity[T layer.Float](t *testing.T, text string, prepare func(layer.Layer[T])) {
	t.Helper()
	dev := cudatest.Device(t)
	const seed, passes = 77, 6
	cpu := runSourceOn(t, text, seed, nil, passes, prepare, nil)
	gpu := runSourceOn(t, text, seed, dev, passes, prepare, nil)
	compareSourceRuns(t, gpu, cpu)
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
	// Records and images of several sizes, a batch each: the device
	// transforms the batches of the first record's size, the host the
	// others (TestDataShapesEachBatch).
	sized := numbered(6, 3, 8, 8)
	for _, i := range []int{1, 4} {
		sized[i] = numbered(6, 3, 10, 9)[i]
	}
	sized[2] = numbered(6, 3, 6, 7)[2]
	sizes := writeDatums(t, sized)
	var sizedImgs []image.Image
	for i := range 4 {
		sizedImgs = append(sizedImgs, colorImage(5+2*(i%2), 6+i, byte(40*i)))
	}
	sizedRoot, sizedList := writeImageList(t, sizedImgs)
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
		"Data/prefetch4":    dataText(raw, "batch_size: 3 prefetch: 4", transform),
		"Data/prefetch0":    dataText(raw, "batch_size: 3 prefetch: 0", transform),
		"Data/encoded":      dataText(enc, "batch_size: 2", `transform_param { crop_size: 4 mirror: true }`),
		"Data/sizes":        dataText(sizes, "batch_size: 1 prefetch: 3", `transform_param { crop_size: 5 mirror: true mean_value: 3 scale: 0.5 }`),
		"Data/sizes_nocrop": dataText(sizes, "batch_size: 1 prefetch: 2", `transform_param { mirror: true mean_value: 3 }`),
		"ImageData/sizes":   imageDataText(sizedRoot, sizedList, "batch_size: 1", `transform_param { mirror: true }`),
		"ImageData":         imageDataText(root, list, "batch_size: 2 shuffle: true new_height: 6 new_width: 7", `transform_param { crop_size: 5 mirror: true }`),
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
			if err := l.(*datalayer.MemoryData[float32]).Reset(items, labels, 6); err != nil {
				t.Fatal(err)
			}
		}
		checkSourceParity(t, memoryText, reset)
	})
}

// TestDataDeviceTransform: a Data layer on the GPU leaves crop, mirror,
// mean (a mean file, mean values) and scale of 8-bit images, raw or
// encoded, to the device, and its batches are the CPU layer's to the bit;
// a batch holding a float datum is finished on the host, its 8-bit items
// staged before the float one included; GOCAFFE_DEVICE_TRANSFORM=off keeps
// every batch on the host.
func TestDataDeviceTransform(t *testing.T) {
	dev := cudatest.Device(t)
	const c, h, w = 3, 8, 8
	mean := make([]float32, c*h*w)
	for i := range mean {
		mean[i] = float32(i%29) * 0.75
	}
	meanPath := filepath.Join(t.TempDir(), "mean.binaryproto")
	bp := &caffepb.BlobProto{Num: proto.Int32(1), Channels: proto.Int32(c), Height: proto.Int32(h), Width: proto.Int32(w), Data: mean}
	if err := protoio.WriteProtoToBinaryFile(bp, meanPath); err != nil {
		t.Fatal(err)
	}
	raw := writeDatums(t, numbered(7, c, h, w))
	mixedRecs := numbered(7, c, h, w)
	for _, i := range []int{4, 6} { // floats in the second, third, fourth and fifth batches of three
		d := mixedRecs[i]
		d.FloatData = make([]float32, c*h*w)
		for j := range d.FloatData {
			d.FloatData[j] = float32(j) * 0.5
		}
		d.Data = nil
	}
	mixed := writeDatums(t, mixedRecs)
	var encRecs []*caffepb.Datum
	for i := range 5 {
		encRecs = append(encRecs, &caffepb.Datum{Data: encodePNG(t, colorImage(w, h, byte(30*i))), Encoded: proto.Bool(true), Label: proto.Int32(int32(i))})
	}
	encoded := writeDatums(t, encRecs)
	const passes = 6
	cases := []struct {
		name, src, transform string
		transformed          int64 // batches the device transforms, of passes
	}{
		{"mean_file", raw, `transform_param { crop_size: 5 mirror: true scale: 0.25 mean_file: "` + meanPath + `" }`, passes},
		{"mean_file_whole", raw, `transform_param { mirror: true mean_file: "` + meanPath + `" }`, passes},
		{"mean_values", raw, `transform_param { crop_size: 6 mirror: true mean_value: 1 mean_value: 2 mean_value: 3 scale: 0.5 }`, passes},
		{"none", raw, ``, passes},
		{"encoded", encoded, `transform_param { crop_size: 7 mirror: true mean_value: 100 scale: 0.125 }`, passes},
		{"float_datums", mixed, `transform_param { crop_size: 5 mirror: true mean_value: 7 }`, 2},
	}
	for _, tc := range cases {
		// prefetch: 0 loads one batch a pass: the counts are exact.
		text := dataText(tc.src, "batch_size: 3 prefetch: 0", tc.transform)
		t.Run(tc.name+"/float32", func(t *testing.T) { checkDeviceTransform[float32](t, dev, text, passes, tc.transformed) })
		t.Run(tc.name+"/float64", func(t *testing.T) { checkDeviceTransform[float64](t, dev, text, passes, tc.transformed) })
	}
	t.Run("off", func(t *testing.T) { // the DeviceTransform setting off (GOCAFFE_DEVICE_TRANSFORM=off)
		text, off := dataText(raw, "batch_size: 3 prefetch: 0", cases[0].transform), settings.Settings{DeviceTransform: settings.Off}
		cpu := runSourceOn[float32](t, text, 31, nil, passes, nil, nil)
		var got int64
		gpu := runSourceWith(t, text, 31, dev, off, passes, nil, func(l layer.Layer[float32]) { got = datalayer.DeviceTransformed(l) })
		compareSourceRuns(t, gpu, cpu)
		if got != 0 {
			t.Errorf("the device transformed %d batches of %d with the setting off, want 0", got, passes)
		}
	})
	// With prefetching (batches loaded ahead on the goroutine, pushed
	// on its stream) the batches are the same.
	t.Run("prefetch", func(t *testing.T) {
		text := dataText(encoded, "batch_size: 2 prefetch: 3", cases[4].transform)
		cpu := runSourceOn[float32](t, text, 9, nil, 2*passes, nil, nil)
		var n int64
		gpu := runSourceOn(t, text, 9, dev, 2*passes, nil, func(l layer.Layer[float32]) { n = datalayer.DeviceTransformed(l) })
		compareSourceRuns(t, gpu, cpu)
		if n < 2*passes {
			t.Errorf("the device transformed %d batches of %d", n, 2*passes)
		}
	})
}

func checkDeviceTransform[T layer.Float](t *testing.T, dev *cuda.Device, text string, passes int, want int64) {
	const seed = 31
	cpu := runSourceOn[T](t, text, seed, nil, passes, nil, nil)
	var got int64
	gpu := runSourceOn(t, text, seed, dev, passes, nil, func(l layer.Layer[T]) { got = datalayer.DeviceTransformed(l) })
	compareSourceRuns(t, gpu, cpu)
	if got != want {
		t.Errorf("the device transformed %d batches of %d, want %d", got, passes, want)
	}
}

// compareSourceRuns holds a GPU run's tops to the CPU run's, exactly.
func compareSourceRuns[T layer.Float](t *testing.T, gpu, cpu [][][]T) {
	t.Helper()
	for i := range cpu {
		for k := range cpu[i] {
			layertest.CheckClose(t, fmt.Sprintf("pass %d top %d", i, k), gpu[i][k], cpu[i][k], 0)
		}
	}
}
