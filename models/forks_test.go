package models_test

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// TestForkModels builds the fork-style nets of models/forks and runs them:
// forward for the deploy and test nets, forward and backward for the
// training nets, with random images. It checks what each must produce:
// SSD's detection rows, Faster R-CNN's regions and per-region scores, a
// finite loss and gradients for the training nets.
func TestForkModels(t *testing.T) {
	for _, c := range []struct {
		file  string
		phase caffepb.Phase
		large bool
		check func(t *testing.T, n *net.Net[float32])
		// prepare, when set, adapts the net before it is built.
		prepare func(t *testing.T, p *caffepb.NetParameter)
	}{
		{"ssd300_vgg16_deploy.prototxt", caffepb.Phase_TEST, true, checkDetections, nil},
		{"ssd300_vgg16_train.prototxt", caffepb.Phase_TRAIN, true, checkTrained, readSyntheticBoxes},
		{"mobilenet_ssd_deploy.prototxt", caffepb.Phase_TEST, false, checkDetections, nil},
		{"faster_rcnn_vgg16_test.prototxt", caffepb.Phase_TEST, true, checkFasterRCNN, nil},
		{"faster_rcnn_vgg16_train.prototxt", caffepb.Phase_TRAIN, true, checkFasterRCNNTrained, nil},
		{"se_resnet_block_train.prototxt", caffepb.Phase_TRAIN, false, checkTrained, nil},
		{"tsn_bn_inception_train.prototxt", caffepb.Phase_TRAIN, false, checkTrained, readSyntheticVideos},
	} {
		t.Run(c.file, func(t *testing.T) {
			if c.large && testing.Short() {
				t.Skip("a VGG-16 net; -short")
			}
			p := &caffepb.NetParameter{}
			if err := protoio.ReadProtoFromTextFile(filepath.Join("forks", c.file), p); err != nil {
				t.Fatal(err)
			}
			if c.prepare != nil {
				c.prepare(t, p)
			}
			n, err := net.New[float32](p, net.Options{State: &caffepb.NetState{Phase: c.phase.Enum()}, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			if c.prepare == nil {
				fillInputs(t, n)
			}
			if _, err := n.Forward(); err != nil {
				t.Fatal(err)
			}
			if c.phase == caffepb.Phase_TRAIN {
				if err := n.Backward(); err != nil {
					t.Fatal(err)
				}
			}
			c.check(t, n)
		})
	}
}

// readSyntheticBoxes points the AnnotatedData layer at an LMDB of the
// synthetic detection set (32 x 32 images the layer's resize_param warps
// to 300 x 300) and reads batches of 2.
func readSyntheticBoxes(t *testing.T, p *caffepb.NetParameter) {
	src := writeBoxesLMDB(t, 8, 3)
	for _, l := range p.Layer {
		if l.GetType() == "AnnotatedData" {
			l.DataParam.Source, l.DataParam.BatchSize = proto.String(src), proto.Uint32(2)
		}
	}
}

// readSyntheticVideos points the VideoData layer at folders of JPEG
// frames of its own: two videos of 9 frames of 80 x 96.
func readSyntheticVideos(t *testing.T, p *caffepb.NetParameter) {
	dir := t.TempDir()
	var list strings.Builder
	for v := range 2 {
		folder := filepath.Join(dir, fmt.Sprintf("video%d", v))
		if err := os.MkdirAll(folder, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := 1; f <= 9; f++ {
			img := image.NewRGBA(image.Rect(0, 0, 96, 80))
			for i := range img.Pix {
				img.Pix[i] = byte(i*(v+1) + 20*f)
			}
			var b bytes.Buffer
			if err := jpeg.Encode(&b, img, nil); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(folder, fmt.Sprintf("img_%05d.jpg", f)), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Fprintf(&list, "%s 9 %d\n", folder, 3+v)
	}
	src := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(src, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range p.Layer {
		if l.GetType() == "VideoData" {
			l.VideoDataParam.Source = proto.String(src)
		}
	}
}

// fillInputs gives the net random images, labels in 0..9, and Faster
// R-CNN's im_info its image's size at scale 1.
func fillInputs(t *testing.T, n *net.Net[float32]) {
	t.Helper()
	if b := n.BlobByName("data"); b != nil {
		rng := rand.New(rand.NewPCG(3, 3))
		for i := range b.MutableCPUData() {
			b.MutableCPUData()[i] = float32(50 * rng.NormFloat64())
		}
	}
	if b := n.BlobByName("label"); b != nil {
		for i := range b.MutableCPUData() {
			b.MutableCPUData()[i] = float32(i % 10)
		}
	}
	if b := n.BlobByName("gt_boxes"); b != nil {
		copy(b.MutableCPUData(), []float32{20, 30, 120, 150, 7, 100, 60, 200, 200, 15})
	}
	if b := n.BlobByName("im_info"); b != nil {
		s := n.BlobByName("data").Shape()
		copy(b.MutableCPUData(), []float32{float32(s[2]), float32(s[3]), 1})
	}
}

func checkDetections(t *testing.T, n *net.Net[float32]) {
	d := n.BlobByName("detection_out")
	if s := d.Shape(); len(s) != 4 || s[3] != 7 || s[2] < 1 {
		t.Fatalf("detection_out %v, want 1 x 1 x D x 7", s)
	}
	rows := d.CPUData()
	for r := 0; r < len(rows); r += 7 {
		if rows[r+1] == -1 { // no detection
			continue
		}
		if label, score := rows[r+1], rows[r+2]; label < 1 || label > 20 || score < 0.01 || score > 1 {
			t.Fatalf("row %d: label %v score %v", r/7, label, score)
		}
	}
	t.Logf("%d detection rows from %d priors", d.Shape()[2], n.BlobByName("mbox_priorbox").Shape()[2]/4)
}

func checkFasterRCNN(t *testing.T, n *net.Net[float32]) {
	rois := n.BlobByName("rois")
	if rois.Shape()[1] != 5 || rois.Shape()[0] < 1 || rois.Shape()[0] > 300 {
		t.Fatalf("rois %v, want 1 to 300 x 5", rois.Shape())
	}
	for _, name := range []string{"cls_prob", "bbox_pred"} {
		if got := n.BlobByName(name).Shape()[0]; got != rois.Shape()[0] {
			t.Errorf("%s has %d rows for %d regions", name, got, rois.Shape()[0])
		}
	}
	t.Logf("%d proposals", rois.Shape()[0])
}

// checkFasterRCNNTrained checks the four losses and that the sampled
// regions include foreground ones of the boxes' classes.
func checkFasterRCNNTrained(t *testing.T, n *net.Net[float32]) {
	for _, name := range []string{"rpn_loss_cls", "rpn_loss_bbox", "loss_cls", "loss_bbox"} {
		v := n.BlobByName(name).CPUData()[0]
		if math.IsNaN(float64(v)) || v < 0 {
			t.Fatalf("%s = %v", name, v)
		}
		t.Logf("%s = %.4f", name, v)
	}
	fg := map[float32]int{}
	for _, c := range n.BlobByName("labels").CPUData() {
		fg[c]++
	}
	if fg[7] == 0 || fg[15] == 0 || fg[0] == 0 {
		t.Errorf("region classes %v: want foreground regions of classes 7 and 15 (the ground truth is among the candidates) and background ones", fg)
	}
	checkTrained(t, n)
}

func checkTrained(t *testing.T, n *net.Net[float32]) {
	lossBlob := n.BlobByName("loss")
	for _, other := range []string{"mbox_loss", "loss_cls"} { // SSD's and Faster R-CNN's names
		if lossBlob == nil {
			lossBlob = n.BlobByName(other)
		}
	}
	loss := lossBlob.CPUData()[0]
	if math.IsNaN(float64(loss)) || loss <= 0 {
		t.Fatalf("loss %v", loss)
	}
	var sum float64
	for _, p := range n.LearnableParams() {
		for _, g := range p.CPUDiff() {
			sum += math.Abs(float64(g))
		}
	}
	if sum == 0 || math.IsNaN(sum) {
		t.Fatalf("parameter gradients sum to %v", sum)
	}
	t.Logf("loss %.4f, |gradients| %.4g", loss, sum)
}
