package main

import (
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// caffeLog is a training log in Caffe's format (the lines solver.cpp and
// sgd_solver.cpp write), with tests at 0 and 200.
const caffeLog = `I1124 09:59:59.000000  1234 caffe.cpp:217] Using GPUs 0
I1124 10:00:00.000000  1234 solver.cpp:279] Solving LeNet
I1124 10:00:00.000100  1234 solver.cpp:280] Learning Rate Policy: inv
I1124 10:00:00.500000  1234 solver.cpp:337] Iteration 0, Testing net (#0)
I1124 10:00:01.250000  1234 solver.cpp:404]     Test net output #0: accuracy = 0.0856
I1124 10:00:01.250010  1234 solver.cpp:404]     Test net output #1: loss = 2.33287 (* 1 = 2.33287 loss)
I1124 10:00:01.300000  1234 solver.cpp:228] Iteration 0, loss = 2.31414
I1124 10:00:01.300010  1234 solver.cpp:244]     Train net output #0: loss = 2.31414 (* 1 = 2.31414 loss)
I1124 10:00:01.300020  1234 sgd_solver.cpp:106] Iteration 0, lr = 0.01
I1124 10:00:03.000000  1234 solver.cpp:228] Iteration 100, loss = 0.221
I1124 10:00:03.000010  1234 solver.cpp:244]     Train net output #0: loss = 0.221 (* 1 = 0.221 loss)
I1124 10:00:03.000020  1234 sgd_solver.cpp:106] Iteration 100, lr = 0.00992565
I1124 10:00:04.500000  1234 solver.cpp:337] Iteration 200, Testing net (#0)
I1124 10:00:05.000000  1234 solver.cpp:404]     Test net output #0: accuracy = 0.9713
I1124 10:00:05.000010  1234 solver.cpp:404]     Test net output #1: loss = 0.0912 (* 1 = 0.0912 loss)
I1124 10:00:05.100000  1234 solver.cpp:228] Iteration 200, loss = 0.1234
I1124 10:00:05.100010  1234 solver.cpp:244]     Train net output #0: loss = 0.1234 (* 1 = 0.1234 loss)
I1124 10:00:05.100020  1234 sgd_solver.cpp:106] Iteration 200, lr = 0.00985258
`

// TestParseLog: the CSVs Caffe's parse_log.py writes for caffeLog, worked
// out by hand from the script: rows pushed when full or when the next
// iteration starts, the learning rate seen so far (the first row's copied
// from the second), seconds since "Solving", Python's float repr, CRLF.
//
// Caffe built against glog 0.6 or later writes the year in every line
// ("I20261124 10:00:00.000000"): the same log so written gives the same
// CSVs.
func TestParseLog(t *testing.T) {
	withYears := regexp.MustCompile(`(?m)^([IWEF])(\d{4} )`).ReplaceAllString(caffeLog, "${1}2026$2")
	for _, log := range []string{caffeLog, withYears} {
		checkParseLog(t, log)
	}
}

func checkParseLog(t *testing.T, text string) {
	dir := t.TempDir()
	log := filepath.Join(dir, "caffe.INFO")
	if err := os.WriteFile(log, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd("parse_log", log, dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := map[string]string{
		"caffe.INFO.train": "NumIters,Seconds,LearningRate,loss\r\n" +
			"0.0,1.30001,0.01,2.31414\r\n" +
			"100.0,3.00001,0.01,0.221\r\n" +
			"200.0,5.10001,0.00992565,0.1234\r\n",
		"caffe.INFO.test": "NumIters,Seconds,LearningRate,accuracy,loss\r\n" +
			"0.0,1.25,0.00992565,0.0856,2.33287\r\n" +
			"200.0,5.0,0.00992565,0.9713,0.0912\r\n",
	}
	for name, w := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != w {
			t.Errorf("%s:\n%q\nwant\n%q", name, got, w)
		}
	}
	if code, _, stderr := runCmd("parse_log", filepath.Join(dir, "caffe.INFO.train"), dir); code != 1 || !strings.Contains(stderr, `no "Solving" line`) {
		t.Errorf("a file that is no log: exit %d, %s", code, stderr)
	}
}

func TestPyFloat(t *testing.T) {
	for v, want := range map[float64]string{0: "0.0", 100: "100.0", 1e-5: "1e-05", 1.5e-5: "1.5e-05", 0.0001: "0.0001",
		1e16: "1e+16", 1234567890123456: "1234567890123456.0", 0.00992565: "0.00992565", -2.5: "-2.5", 1.30001: "1.30001"} {
		if got := pyFloat(v); got != want {
			t.Errorf("pyFloat(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestUpgradeTools: a V1 net prototxt, the same net as a binary V0/V1
// caffemodel, and a solver with solver_type come out in the current format,
// equal to what netproto's upgrade gives and readable as current files.
func TestUpgradeTools(t *testing.T) {
	dir := t.TempDir()
	v1 := `name: "old" input: "data" input_dim: 1 input_dim: 1 input_dim: 8 input_dim: 8
layers { name: "conv" type: CONVOLUTION bottom: "data" top: "conv" convolution_param { num_output: 2 kernel_size: 3 } blobs_lr: 1 blobs_lr: 2 weight_decay: 1 weight_decay: 0 }
layers { name: "relu" type: RELU bottom: "conv" top: "conv" }
`
	in := filepath.Join(dir, "old.prototxt")
	os.WriteFile(in, []byte(v1), 0o644)
	out := filepath.Join(dir, "new.prototxt")
	if code, _, stderr := runCmd("upgrade_net_proto_text", in, out); code != 0 {
		t.Fatalf("upgrade_net_proto_text: exit %d: %s", code, stderr)
	}
	want, err := netproto.ReadNetParamsFromTextFile(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got caffepb.NetParameter
	if err := protoio.ReadProtoFromTextFile(out, &got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, want) || len(got.Layers) != 0 || len(got.Layer) != 3 || got.Layer[1].GetType() != "Convolution" {
		t.Errorf("upgraded net:\n%v\nwant\n%v", &got, want)
	}

	var old caffepb.NetParameter
	protoio.ParseText([]byte(v1), &old)
	bin := filepath.Join(dir, "old.caffemodel")
	if err := protoio.WriteProtoToBinaryFile(&old, bin); err != nil {
		t.Fatal(err)
	}
	binOut := filepath.Join(dir, "new.caffemodel")
	if code, _, stderr := runCmd("upgrade_net_proto_binary", bin, binOut); code != 0 {
		t.Fatalf("upgrade_net_proto_binary: exit %d: %s", code, stderr)
	}
	var gotBin caffepb.NetParameter
	if err := protoio.ReadProtoFromBinaryFile(binOut, &gotBin); err != nil || !proto.Equal(&gotBin, want) {
		t.Errorf("upgraded binary net: %v\n%v", err, &gotBin)
	}

	solverIn := filepath.Join(dir, "solver.prototxt")
	os.WriteFile(solverIn, []byte("net: \"x.prototxt\" base_lr: 0.01 solver_type: ADAM\n"), 0o644)
	solverOut := filepath.Join(dir, "solver_new.prototxt")
	if code, _, stderr := runCmd("upgrade_solver_proto_text", solverIn, solverOut); code != 0 {
		t.Fatalf("upgrade_solver_proto_text: exit %d: %s", code, stderr)
	}
	var s caffepb.SolverParameter
	if err := protoio.ReadProtoFromTextFile(solverOut, &s); err != nil || s.SolverType != nil || s.GetType() != "Adam" || s.GetBaseLr() != 0.01 {
		t.Errorf("upgraded solver: %v, %v", err, &s)
	}
	both := filepath.Join(dir, "both.prototxt")
	os.WriteFile(both, []byte("solver_type: ADAM type: \"Adam\"\n"), 0o644)
	if code, _, stderr := runCmd("upgrade_solver_proto_text", both, solverOut); code != 1 || !strings.Contains(stderr, "cannot be both specified") {
		t.Errorf("solver_type and type: exit %d, %s", code, stderr)
	}
}

// TestExtractFeatures: extract_features writes, for each item of each
// batch, the blob's values as a Datum under Caffe's keys; read back, they
// are what a forward pass of the same net with the same weights gives.
func TestExtractFeatures(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "net.prototxt")
	os.WriteFile(model, []byte(`name: "feat"
layer { name: "d" type: "DummyData" top: "x" dummy_data_param { shape { dim: 3 dim: 2 dim: 2 dim: 2 } data_filler { type: "gaussian" } } }
layer { name: "ip" type: "InnerProduct" bottom: "x" top: "ip" inner_product_param { num_output: 4 weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } } }
layer { name: "relu" type: "ReLU" bottom: "ip" top: "r" }
`), 0o644)
	n, err := net.NewFromFile[float32](model, net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TEST.Enum()}, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	weights := filepath.Join(dir, "w.caffemodel")
	if err := protoio.WriteProtoToBinaryFile(n.ToProto(false), weights); err != nil {
		t.Fatal(err)
	}
	n.Close()
	// The reference: the command's own net (seed 1701), two batches.
	ref, err := net.NewFromFile[float32](model, net.Options{State: &caffepb.NetState{Phase: caffepb.Phase_TEST.Enum()}, Seed: 1701})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if err := ref.CopyTrainedLayersFromFile(weights); err != nil {
		t.Fatal(err)
	}
	var wantIP, wantX [][]float32
	for range 2 {
		if _, err := ref.Forward(); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			wantIP = append(wantIP, slices.Clone(ref.BlobByName("ip").CPUData()[i*4:(i+1)*4]))
			wantX = append(wantX, slices.Clone(ref.BlobByName("x").CPUData()[i*8:(i+1)*8]))
		}
	}
	ipDB, xDB := filepath.Join(dir, "ip_lmdb"), filepath.Join(dir, "x_lmdb")
	if code, _, stderr := runCmd("extract_features", "-model", model, "-weights", weights, "-blobs", "ip,x", "-db", ipDB+","+xDB, "-iterations", "2"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		db      string
		want    [][]float32
		c, h, w int32
	}{{ipDB, wantIP, 4, 1, 1}, {xDB, wantX, 2, 2, 2}} {
		db, err := data.Open(caffepb.DataParameter_LMDB, c.db, data.Read)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := db.NewCursor()
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for ; cur.Valid(); k++ {
			var d caffepb.Datum
			if err := proto.Unmarshal(cur.Value(), &d); err != nil {
				t.Fatal(err)
			}
			if key := string(cur.Key()); key != fmt.Sprintf("%010d", k) || d.GetChannels() != c.c || d.GetHeight() != c.h || d.GetWidth() != c.w || !slices.Equal(d.FloatData, c.want[k]) {
				t.Errorf("%s record %d: key %s, %dx%dx%d %v; want %dx%dx%d %v", c.db, k, key, d.GetChannels(), d.GetHeight(), d.GetWidth(), d.FloatData, c.c, c.h, c.w, c.want[k])
			}
			if err := cur.Next(); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
		if k != 6 {
			t.Errorf("%s: %d records, want 6", c.db, k)
		}
	}
	if code, _, stderr := runCmd("extract_features", "-model", model, "-weights", weights, "-blobs", "nope", "-db", filepath.Join(dir, "n_lmdb")); code != 1 || !strings.Contains(stderr, "unknown feature blob name nope") {
		t.Errorf("unknown blob: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "n_lmdb")); !os.IsNotExist(err) {
		t.Errorf("a failed extraction left its database (%v)", err)
	}
}

// TestPlot: the curves of caffeLog as PNG (decoded: the asked size, drawn
// in several colours) and SVG (a legend entry per series: train loss, test
// accuracy, test loss, learning rate).
func TestPlot(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "caffe.INFO")
	os.WriteFile(log, []byte(caffeLog), 0o644)
	pngPath, svgPath := filepath.Join(dir, "c.png"), filepath.Join(dir, "c.svg")
	if code, _, stderr := runCmd("plot", "-o", pngPath, "-width", "10", "-height", "8", log); code != 0 {
		t.Fatalf("plot png: exit %d: %s", code, stderr)
	}
	bounds, colours := pngColours(t, pngPath, 2)
	if b := bounds; b.Dx() < 370 || b.Dx() > 390 || b.Dy() < 295 || b.Dy() > 310 { // 10 x 8 cm at 96 dpi
		t.Errorf("PNG is %v, want about 378x302", b)
	}
	if len(colours) < 4 {
		t.Errorf("the PNG has %d colours: nothing drawn", len(colours))
	}
	if code, _, stderr := runCmd("plot", "-x", "seconds", "-o", svgPath, log); code != 0 {
		t.Fatalf("plot svg: exit %d: %s", code, stderr)
	}
	svg, _ := os.ReadFile(svgPath)
	for _, w := range []string{">train loss<", ">test accuracy<", ">test loss<", ">learning rate<", ">seconds<"} {
		if !strings.Contains(string(svg), w) {
			t.Errorf("the SVG lacks %q", w)
		}
	}
	if code, _, stderr := runCmd("plot", "-o", filepath.Join(dir, "c.gif"), log); code != 1 || !strings.Contains(stderr, ".png or .svg") {
		t.Errorf("a .gif: exit %d: %s", code, stderr)
	}
}

// TestDraw: LeNet's deploy net as DOT (9 layers, 9 blob nodes, 17 edges;
// shapes from building the net), SVG (every layer's type and a shape in
// the text) and PNG (decoded; convolution red and pooling orange present),
// in both directions; and the train net in TEST phase keeps its Accuracy.
func TestDraw(t *testing.T) {
	dir := t.TempDir()
	deploy := "../../models/lenet/lenet_deploy.prototxt"
	dotPath := filepath.Join(dir, "lenet.dot")
	if code, _, stderr := runCmd("draw", "-model", deploy, "-o", dotPath); code != 0 {
		t.Fatalf("draw dot: exit %d: %s", code, stderr)
	}
	dot, _ := os.ReadFile(dotPath)
	if n := strings.Count(string(dot), "shape=record"); n != 9 {
		t.Errorf("DOT has %d layer nodes, want 9", n)
	}
	if n := strings.Count(string(dot), "shape=octagon"); n != 9 {
		t.Errorf("DOT has %d blob nodes, want 9", n)
	}
	if n := strings.Count(string(dot), "->"); n != 17 {
		t.Errorf("DOT has %d edges, want 17", n)
	}
	if !strings.Contains(string(dot), `64 20 24 24 (737280)`) {
		t.Errorf("DOT lacks conv1's shape:\n%s", dot)
	}
	svgPath := filepath.Join(dir, "lenet.svg")
	if code, _, stderr := runCmd("draw", "-model", deploy, "-o", svgPath, "-rankdir", "LR"); code != 0 {
		t.Fatalf("draw svg: exit %d: %s", code, stderr)
	}
	svg, _ := os.ReadFile(svgPath)
	for typ, want := range map[string]int{"(Convolution)": 2, "(Pooling)": 2, "(InnerProduct)": 2, "(ReLU)": 1, "(Softmax)": 1, "(Input)": 1} {
		if n := strings.Count(string(svg), typ); n != want {
			t.Errorf("SVG shows %s %d times, want %d", typ, n, want)
		}
	}
	pngPath := filepath.Join(dir, "lenet.png")
	if code, _, stderr := runCmd("draw", "-model", "../../models/lenet/lenet_train_test.prototxt", "-phase", "TEST", "-o", pngPath); code != 0 {
		t.Fatalf("draw png: exit %d: %s", code, stderr)
	}
	_, found := pngColours(t, pngPath, 1)
	for name, c := range map[string][3]uint32{"convolution red": {0xff, 0x50, 0x50}, "pooling orange": {0xff, 0x99, 0x00}} {
		if !found[c] {
			t.Errorf("the PNG has no %s", name)
		}
	}
	if code, _, stderr := runCmd("draw", "-model", "../../models/lenet/lenet_train_test.prototxt", "-phase", "TEST", "-o", dotPath); code != 0 || func() bool { b, _ := os.ReadFile(dotPath); return !strings.Contains(string(b), "(Accuracy)") }() {
		t.Errorf("TEST phase: exit %d %s, or no Accuracy layer", code, stderr)
	}
}

// pngColours decodes a PNG and returns its bounds and the colours of every
// step-th pixel of every step-th row.
func pngColours(t *testing.T, path string, step int) (image.Rectangle, map[[3]uint32]bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	colours := map[[3]uint32]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += step {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += step {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	return img.Bounds(), colours
}
