package models_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/internal/logtest"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
)

// A synthetic detection set: blank 32 x 32 images, each with one filled
// rectangle of 8 to 16 pixels a side, class 1 drawn in the first channel,
// class 2 in the second. Its data layer is written in Go and registered as
// a Python layer, the way a Caffe user's own Python data layer would run
// here.
func init() {
	if err := layer.RegisterPython("synthetic.BoxesLayer", newBoxes[float32], newBoxes[float64]); err != nil {
		panic(err)
	}
}

const boxImage = 32

// boxes is the synthetic data layer: top 0 the images, top 1 SSD's ground
// truth rows (image, label, 0, xmin, ymin, xmax, ymax, 0). In TEST it draws
// the same images at every pass (a fixed test set); in TRAIN new ones.
type boxes[T layer.Float] struct {
	layer.Base[T]
	batch int
	seed  uint64
	rng   *rand.Rand
}

func newBoxes[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &boxes[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	for _, kv := range strings.Split(p.GetPythonParam().GetParamStr(), ",") {
		k, v, _ := strings.Cut(kv, ":")
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("param_str %q: %w", p.GetPythonParam().GetParamStr(), err)
		}
		switch strings.Trim(strings.TrimSpace(k), "'") {
		case "batch":
			l.batch = n
		case "seed":
			l.seed = uint64(n)
		}
	}
	l.rng = rand.New(rand.NewPCG(l.seed, 1))
	return l, nil
}

func (*boxes[T]) Type() string { return "Python" }
func (*boxes[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.Exactly(0), Top: layer.Exactly(2)}
}
func (*boxes[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error { return nil }

func (l *boxes[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	if err := top[0].Reshape([]int{l.batch, 3, boxImage, boxImage}); err != nil {
		return err
	}
	return top[1].Reshape([]int{1, 1, l.batch, 8})
}

func (l *boxes[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	if l.Phase() == caffepb.Phase_TEST {
		l.rng = rand.New(rand.NewPCG(l.seed, 1))
	}
	img, gt := top[0].MutableCPUData(), top[1].MutableCPUData()
	clear(img)
	plane := boxImage * boxImage
	for i := range l.batch {
		class := 1 + l.rng.IntN(2)
		w, h := 8+l.rng.IntN(9), 8+l.rng.IntN(9)
		x, y := l.rng.IntN(boxImage-w+1), l.rng.IntN(boxImage-h+1)
		ch := img[(i*3+class-1)*plane : (i*3+class)*plane]
		for r := y; r < y+h; r++ {
			for c := x; c < x+w; c++ {
				ch[r*boxImage+c] = 1
			}
		}
		s := T(boxImage)
		copy(gt[8*i:], []T{T(i), T(class), 0, T(x) / s, T(y) / s, T(x+w) / s, T(y+h) / s, 0})
	}
	return nil
}

func (*boxes[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return nil
}

// tinySSD is a small SSD for the synthetic set: three convolutions, heads
// on the 8 x 8 and 4 x 4 maps with four priors each, MultiBoxLoss in TRAIN
// and DetectionOutput + DetectionEvaluate in TEST, in SSD's layout.
const tinySSD = `name: "tiny_ssd"
layer { name: "data" type: "Python" top: "data" top: "label" include { phase: TRAIN }
  python_param { module: "synthetic" layer: "BoxesLayer" param_str: "'batch': 16, 'seed': 1" } }
layer { name: "data" type: "Python" top: "data" top: "label" include { phase: TEST }
  python_param { module: "synthetic" layer: "BoxesLayer" param_str: "'batch': 64, 'seed': 99" } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1" convolution_param { num_output: 16 kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2" convolution_param { num_output: 32 kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
layer { name: "relu2" type: "ReLU" bottom: "conv2" top: "conv2" }
layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "conv3" type: "Convolution" bottom: "pool2" top: "conv3" convolution_param { num_output: 32 kernel_size: 3 pad: 1 stride: 2 weight_filler { type: "xavier" } } }
layer { name: "relu3" type: "ReLU" bottom: "conv3" top: "conv3" }
%s
layer { name: "mbox_loc" type: "Concat" bottom: "pool2_mbox_loc_flat" bottom: "conv3_mbox_loc_flat" top: "mbox_loc" concat_param { axis: 1 } }
layer { name: "mbox_conf" type: "Concat" bottom: "pool2_mbox_conf_flat" bottom: "conv3_mbox_conf_flat" top: "mbox_conf" concat_param { axis: 1 } }
layer { name: "mbox_priorbox" type: "Concat" bottom: "pool2_mbox_priorbox" bottom: "conv3_mbox_priorbox" top: "mbox_priorbox" concat_param { axis: 2 } }
layer { name: "mbox_loss" type: "MultiBoxLoss" bottom: "mbox_loc" bottom: "mbox_conf" bottom: "mbox_priorbox" bottom: "label" top: "mbox_loss"
  include { phase: TRAIN } propagate_down: true propagate_down: true propagate_down: false propagate_down: false
  loss_param { normalization: VALID }
  multibox_loss_param { loc_loss_type: SMOOTH_L1 conf_loss_type: SOFTMAX loc_weight: 1 num_classes: 3 share_location: true
    match_type: PER_PREDICTION overlap_threshold: 0.5 use_prior_for_matching: true background_label_id: 0 use_difficult_gt: true
    neg_pos_ratio: 3 neg_overlap: 0.5 code_type: CENTER_SIZE mining_type: MAX_NEGATIVE } }
layer { name: "mbox_conf_reshape" type: "Reshape" bottom: "mbox_conf" top: "mbox_conf_reshape" include { phase: TEST }
  reshape_param { shape { dim: 0 dim: -1 dim: 3 } } }
layer { name: "mbox_conf_softmax" type: "Softmax" bottom: "mbox_conf_reshape" top: "mbox_conf_softmax" include { phase: TEST } softmax_param { axis: 2 } }
layer { name: "mbox_conf_flatten" type: "Flatten" bottom: "mbox_conf_softmax" top: "mbox_conf_flatten" include { phase: TEST } }
layer { name: "detection_out" type: "DetectionOutput" bottom: "mbox_loc" bottom: "mbox_conf_flatten" bottom: "mbox_priorbox" top: "detection_out"
  include { phase: TEST }
  detection_output_param { num_classes: 3 share_location: true background_label_id: 0 nms_param { nms_threshold: 0.45 top_k: 100 }
    code_type: CENTER_SIZE keep_top_k: 20 confidence_threshold: 0.01 } }
layer { name: "detection_eval" type: "DetectionEvaluate" bottom: "detection_out" bottom: "label" top: "detection_eval"
  include { phase: TEST } detection_evaluate_param { num_classes: 3 background_label_id: 0 overlap_threshold: 0.5 evaluate_difficult_gt: false } }
`

// ssdHeadText writes one prediction head of tinySSD.
func ssdHeadText(src string, minSize, maxSize, step int) string {
	var b strings.Builder
	for _, h := range []struct {
		suffix string
		out    int
	}{{"loc", 16}, {"conf", 12}} {
		name := src + "_mbox_" + h.suffix
		fmt.Fprintf(&b, `layer { name: "%[1]s" type: "Convolution" bottom: "%[2]s" top: "%[1]s" convolution_param { num_output: %[3]d kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
layer { name: "%[1]s_perm" type: "Permute" bottom: "%[1]s" top: "%[1]s_perm" permute_param { order: 0 order: 2 order: 3 order: 1 } }
layer { name: "%[1]s_flat" type: "Flatten" bottom: "%[1]s_perm" top: "%[1]s_flat" }
`, name, src, h.out)
	}
	fmt.Fprintf(&b, `layer { name: "%[1]s_mbox_priorbox" type: "PriorBox" bottom: "%[1]s" bottom: "data" top: "%[1]s_mbox_priorbox"
  prior_box_param { min_size: %[2]d max_size: %[3]d aspect_ratio: 2 flip: true clip: false variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2 step: %[4]d } }
`, src, minSize, maxSize, step)
	return b.String()
}

// TestSSDTrainsOnSyntheticBoxes trains tinySSD a few hundred iterations
// with gocaffe's solver (eval_type: "detection", as SSD's solvers) and
// checks, from the solver's own log lines, that MultiBoxLoss falls and the
// mAP DetectionEvaluate gives rises.
func TestSSDTrainsOnSyntheticBoxes(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 300 iterations; -short")
	}
	trainTinySSD(t, fmt.Sprintf(tinySSD, ssdHeadText("pool2", 8, 14, 4)+ssdHeadText("conv3", 14, 20, 8)))
}

// trainTinySSD trains the net text 300 iterations and checks the loss and
// mAP from the solver's log.
func trainTinySSD(t *testing.T, text string) {
	t.Helper()
	netParam := &caffepb.NetParameter{}
	if err := protoio.ParseText([]byte(text), netParam); err != nil {
		t.Fatal(err)
	}
	sp := &caffepb.SolverParameter{
		NetParam: netParam, TestIter: []int32{1}, TestInterval: ptr[int32](150), BaseLr: ptr[float32](0.001),
		LrPolicy: ptr("fixed"), Type: ptr("Adam"), Momentum: ptr[float32](0.9), Momentum2: ptr[float32](0.999),
		MaxIter: ptr[int32](300), Display: ptr[int32](50), AverageLoss: ptr[int32](50), RandomSeed: ptr[int64](7),
		SolverMode: caffepb.SolverParameter_CPU.Enum(), EvalType: ptr("detection"), ApVersion: ptr("11point"),
		Snapshot: ptr[int32](0), SnapshotAfterTrain: ptr(false),
	}
	rec := &logtest.Recorder{}
	s, err := solver.New[float32](sp, solver.Options{Logger: rec.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Solve(""); err != nil {
		t.Fatal(err)
	}
	var losses, maps []float64
	lossRE := regexp.MustCompile(`Iteration \d+ .*loss = ([0-9.e+-]+)`)
	mapRE := regexp.MustCompile(`detection_eval = ([0-9.e+-]+)`)
	for _, l := range rec.Lines() {
		if m := lossRE.FindStringSubmatch(l.Message); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			losses = append(losses, v)
		}
		if m := mapRE.FindStringSubmatch(l.Message); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			maps = append(maps, v)
		}
	}
	t.Logf("MultiBoxLoss every 50 iterations: %v", losses)
	t.Logf("mAP (11point) at iterations 0, 150, 300: %v", maps)
	if len(losses) < 4 || len(maps) != 3 {
		t.Fatalf("log lines: %d losses and %d mAPs", len(losses), len(maps))
	}
	if last := losses[len(losses)-1]; !(last < 0.6*losses[0]) {
		t.Errorf("loss went from %v to %v; want it below 60%% of the start", losses[0], last)
	}
	if !(maps[0] < 0.1 && maps[2] > 0.5) {
		t.Errorf("mAP went from %v to %v; want it to rise from under 0.1 to over 0.5", maps[0], maps[2])
	}
}

// TestSSDTrainsFromAnnotatedData trains tinySSD as SSD's own scripts do:
// from an LMDB of AnnotatedDatums (PNG-encoded images of the synthetic
// set with their boxes) read by AnnotatedData layers, the TRAIN one with
// SSD's augmentation (photometric distortion, expansion, SSD's seven batch
// samplers, a resize back to 32 x 32 with a random interpolation, mirror).
func TestSSDTrainsFromAnnotatedData(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 300 iterations; -short")
	}
	trainTinySSD(t, tinySSDFromLMDB(writeBoxesLMDB(t, 512, 1), writeBoxesLMDB(t, 64, 99), 16, 64))
}

// tinySSDFromLMDB is tinySSD reading AnnotatedDatums with AnnotatedData
// layers: the TRAIN one from train with SSD's augmentation, the TEST one
// from test.
func tinySSDFromLMDB(train, test string, trainBatch, testBatch int) string {
	var samplers strings.Builder
	samplers.WriteString(`batch_sampler { sampler { min_scale: 1 max_scale: 1 min_aspect_ratio: 1 max_aspect_ratio: 1 } max_sample: 1 max_trials: 1 }`)
	for _, overlap := range []string{"0.1", "0.3", "0.5", "0.7", "0.9"} {
		fmt.Fprintf(&samplers, `
    batch_sampler { sampler { min_scale: 0.3 max_scale: 1 min_aspect_ratio: 0.5 max_aspect_ratio: 2 } sample_constraint { min_jaccard_overlap: %s } max_sample: 1 max_trials: 50 }`, overlap)
	}
	samplers.WriteString(`
    batch_sampler { sampler { min_scale: 0.3 max_scale: 1 min_aspect_ratio: 0.5 max_aspect_ratio: 2 } sample_constraint { max_jaccard_overlap: 1 } max_sample: 1 max_trials: 50 }`)
	data := fmt.Sprintf(`layer { name: "data" type: "AnnotatedData" top: "data" top: "label" include { phase: TRAIN }
  transform_param { scale: 0.003921569 mirror: true
    resize_param { prob: 1 resize_mode: WARP height: 32 width: 32 interp_mode: LINEAR interp_mode: AREA interp_mode: NEAREST interp_mode: CUBIC interp_mode: LANCZOS4 }
    emit_constraint { emit_type: CENTER }
    distort_param { brightness_prob: 0.5 brightness_delta: 32 contrast_prob: 0.5 contrast_lower: 0.5 contrast_upper: 1.5
      hue_prob: 0.5 hue_delta: 18 saturation_prob: 0.5 saturation_lower: 0.5 saturation_upper: 1.5 random_order_prob: 0 }
    expand_param { prob: 0.5 max_expand_ratio: 2 } }
  data_param { source: "%s" batch_size: %d backend: LMDB }
  annotated_data_param {
    %s } }
layer { name: "data" type: "AnnotatedData" top: "data" top: "label" include { phase: TEST }
  transform_param { scale: 0.003921569 resize_param { resize_mode: WARP height: 32 width: 32 interp_mode: LINEAR } }
  data_param { source: "%s" batch_size: %d backend: LMDB } }
`, train, trainBatch, samplers.String(), test, testBatch)
	text := fmt.Sprintf(tinySSD, ssdHeadText("pool2", 8, 14, 4)+ssdHeadText("conv3", 14, 20, 8))
	return data + text[strings.Index(text, `layer { name: "conv1"`):]
}

// writeBoxesLMDB writes n images of the synthetic set (one rectangle of
// class 1 in the blue channel or class 2 in the green one, 255 on 0) as
// PNG-encoded AnnotatedDatums with their boxes, and returns the path.
func writeBoxesLMDB(t *testing.T, n int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	return writeLMDB(t, "boxes_lmdb", n, func(int) proto.Message {
		class := 1 + rng.IntN(2)
		w, h := 8+rng.IntN(9), 8+rng.IntN(9)
		x, y := rng.IntN(boxImage-w+1), rng.IntN(boxImage-h+1)
		img := image.NewNRGBA(image.Rect(0, 0, boxImage, boxImage))
		for p := 3; p < len(img.Pix); p += 4 {
			img.Pix[p] = 255
		}
		for r := y; r < y+h; r++ {
			for c := x; c < x+w; c++ {
				// Datum channel 0 is blue, 1 green (B, G, R planes).
				img.Pix[(r*boxImage+c)*4+3-class] = 255
			}
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		s := float32(boxImage)
		return &caffepb.AnnotatedDatum{
			Datum: &caffepb.Datum{Data: buf.Bytes(), Encoded: ptr(true), Label: ptr[int32](-1)},
			Type:  caffepb.AnnotatedDatum_BBOX.Enum(),
			AnnotationGroup: []*caffepb.AnnotationGroup{{GroupLabel: ptr(int32(class)), Annotation: []*caffepb.Annotation{{
				InstanceId: ptr[int32](0),
				Bbox:       &caffepb.NormalizedBBox{Xmin: ptr(float32(x) / s), Ymin: ptr(float32(y) / s), Xmax: ptr(float32(x+w) / s), Ymax: ptr(float32(y+h) / s)},
			}}}},
		}
	})
}
