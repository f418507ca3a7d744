package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

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
func TestParseLog(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "caffe.INFO")
	if err := os.WriteFile(log, []byte(caffeLog), 0o644); err != nil {
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
