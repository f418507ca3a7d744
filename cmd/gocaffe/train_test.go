package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/mpi"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// gocaffeBin is the gocaffe binary built once for the tests that run it as
// a user does: as a process that can be killed.
var gocaffeBin string

// buildArgs are extra `go build` arguments: the cuda tag in a cuda test
// build, so that the binary under test is the one being tested.
var buildArgs []string

// A test binary built with the cuda, nccl or mpi tags tests a gocaffe
// built with them.
func init() {
	var tags []string
	if cuda.Available() {
		tags = append(tags, "cuda")
	}
	if cuda.NCCLAvailable() {
		tags = append(tags, "nccl")
	}
	if mpi.Available() {
		tags = append(tags, "mpi")
	}
	if len(tags) > 0 {
		buildArgs = []string{"-tags", strings.Join(tags, ",")}
	}
}

func TestMain(m *testing.M) {
	// A fuzzing worker runs one fuzz target and no gocaffe process:
	// building the binary would take most of .ci/run's short -fuzztime.
	flag.Parse()
	if w := flag.Lookup("test.fuzzworker"); w != nil && w.Value.String() == "true" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "gocaffe-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gocaffeBin = filepath.Join(dir, "gocaffe")
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goTool, append(append([]string{"build"}, buildArgs...), "-o", gocaffeBin, ".")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building gocaffe: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// teacherNet is a regression a solver can learn: a student inner product
// learns the weights of a frozen teacher from fresh random inputs each
// iteration, so the loss falls towards zero.
const teacherNet = `
name: "Teacher"
layer { name: "data" type: "DummyData" top: "x"
  dummy_data_param { shape { dim: 16 dim: 8 } data_filler { type: "gaussian" std: 1 } } }
layer { name: "teacher" type: "InnerProduct" bottom: "x" top: "target"
  param { lr_mult: 0 } param { lr_mult: 0 }
  inner_product_param { num_output: 3 weight_filler { type: "uniform" min: -1 max: 1 } bias_filler { type: "constant" value: 0.5 } } }
layer { name: "student" type: "InnerProduct" bottom: "x" top: "guess"
  inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "guess" bottom: "target" top: "loss" }
`

// writeSolver writes the teacher net and a solver for it into dir and
// returns the solver's path.
func writeSolver(t *testing.T, dir, prefix string, extra string) string {
	t.Helper()
	netPath := filepath.Join(dir, "teacher.prototxt")
	if err := os.WriteFile(netPath, []byte(teacherNet), 0o644); err != nil {
		t.Fatal(err)
	}
	solver := fmt.Sprintf(`net: %q
base_lr: 0.05 momentum: 0.9 lr_policy: "step" gamma: 0.5 stepsize: 150 weight_decay: 0.0001
display: 20 random_seed: 1701 solver_mode: CPU
snapshot_prefix: %q
%s`, netPath, filepath.Join(dir, prefix), extra)
	path := filepath.Join(dir, prefix+"_solver.prototxt")
	if err := os.WriteFile(path, []byte(solver), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// gocaffe runs the binary and returns its exit code and stderr (the log).
func gocaffe(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(gocaffeBin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

var lossLine = regexp.MustCompile(`Iteration (\d+)(?: \([^)]*\))?, loss = ([0-9.eE+-]+)`)

// losses reads the "Iteration N, loss = X" lines of a log.
func losses(log string) map[int]float64 {
	out := map[int]float64{}
	for _, m := range lossLine.FindAllStringSubmatch(log, -1) {
		it, _ := strconv.Atoi(m[1])
		v, _ := strconv.ParseFloat(m[2], 64)
		out[it] = v
	}
	return out
}

func readModel(t *testing.T, path string) *caffepb.NetParameter {
	t.Helper()
	p := &caffepb.NetParameter{}
	if err := protoio.ReadProtoFromBinaryFile(path, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTrainKillResume is the end-to-end run of the net/solver issue: train
// decreases the loss and snapshots; a run killed (SIGKILL) after a
// snapshot and resumed from its .solverstate ends with exactly the weights
// of an uninterrupted run.
func TestTrainKillResume(t *testing.T) { trainKillResume(t) }

// trainKillResume runs TestTrainKillResume with extra train flags (-gpu).
func trainKillResume(t *testing.T, flags ...string) {
	dir := t.TempDir()
	full := writeSolver(t, dir, "full", "max_iter: 300 snapshot: 100")
	code, log := gocaffe(t, append([]string{"train", "-solver", full}, flags...)...)
	if code != 0 {
		t.Fatalf("train exited %d:\n%s", code, log)
	}
	l := losses(log)
	if first, last := l[0], l[280]; !(last < first/20) {
		t.Errorf("loss went from %v to %v; want a fall by 20x (log lines: %v)", first, last, l)
	}
	for _, want := range []string{"Iteration 300, loss = ", "Snapshotting to binary proto file " + filepath.Join(dir, "full_iter_300.caffemodel"), "Optimization Done."} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}

	// The same training, run long and killed once its iteration-100
	// snapshot exists.
	long := writeSolver(t, dir, "killed", "max_iter: 100000000 snapshot: 100")
	cmd := exec.Command(gocaffeBin, append([]string{"train", "-solver", long}, flags...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "killed_iter_100.solverstate")
	waitForFile(t, state, 60*time.Second)
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, "killed_iter_100000000.caffemodel")); err == nil {
		t.Fatal("the long run finished before it was killed")
	}
	// Resume to iteration 300.
	code, log = gocaffe(t, append([]string{"train", "-solver", long, "-snapshot", state, "-iterations", "300"}, flags...)...)
	if code != 0 {
		t.Fatalf("resume exited %d:\n%s", code, log)
	}
	if !strings.Contains(log, "Restoring previous solver status from "+state) {
		t.Errorf("resume log lacks the Resuming line:\n%s", log)
	}
	want := readModel(t, filepath.Join(dir, "full_iter_300.caffemodel"))
	got := readModel(t, filepath.Join(dir, "killed_iter_300.caffemodel"))
	if !proto.Equal(got, want) {
		t.Error("weights after kill and resume differ from the uninterrupted run's")
	}
}

func waitForFile(t *testing.T, path string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %v", path, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTrainBadInput: each mistake a user can make ends with a message that
// says what and where, a non-zero exit, no panic and no snapshot written.
func TestTrainBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeSolver(t, dir, "good", "max_iter: 2")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	netSolver := func(name, net, extra string) string {
		netPath := write(name+".prototxt", net)
		return write(name+"_solver.prototxt", fmt.Sprintf("net: %q lr_policy: \"fixed\" max_iter: 5 snapshot_prefix: %q %s", netPath, filepath.Join(dir, name), extra))
	}
	dataNet := func(db string) string {
		return fmt.Sprintf(`layer { name: "data" type: "Data" top: "x" top: "label" data_param { source: %q backend: LMDB batch_size: 2 } }
layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" inner_product_param { num_output: 2 } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "y" bottom: "label" top: "loss" }`, db)
	}
	corrupt := corruptRecordDB(t, filepath.Join(dir, "corrupt_lmdb"))
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"corrupt record", []string{"train", "-solver", netSolver("corrupt", dataNet(corrupt), "base_lr: 0.1")},
			[]string{`layer "data" (Data)`, corrupt, `record "00000003"`, "malformed Datum"}},
		{"missing database", []string{"train", "-solver", netSolver("nodb", dataNet(filepath.Join(dir, "no_lmdb")), "base_lr: 0.1")},
			[]string{`layer "data"`, "no_lmdb"}},
		{"missing solver", []string{"train", "-solver", filepath.Join(dir, "nope.prototxt")}, []string{"nope.prototxt", "no such file"}},
		{"syntax error", []string{"train", "-solver", write("syntax.prototxt", "base_lr: 0.1\nmax_iter: {\n")}, []string{"syntax.prototxt", "line 2:"}},
		{"unknown layer type", []string{"train", "-solver", netSolver("unknown", `layer { name: "d" type: "DummyData" top: "x" dummy_data_param { shape { dim: 1 } } }
layer { name: "c" type: "Convolutoin" bottom: "x" top: "y" }`, "base_lr: 0.1")}, []string{`layer "c"`, `unknown layer type "Convolutoin"`}},
		{"bottom nobody makes", []string{"train", "-solver", netSolver("orphan", `layer { name: "d" type: "DummyData" top: "x" dummy_data_param { shape { dim: 1 } } }
layer { name: "r" type: "ReLU" bottom: "z" top: "y" }`, "base_lr: 0.1")}, []string{`layer "r"`, `unknown bottom blob "z"`}},
		{"NaN loss", []string{"train", "-solver", netSolver("nan", teacherNet, "base_lr: 1e30 snapshot_after_train: true")}, []string{"loss is", "iteration"}},
		{"weights and snapshot", []string{"train", "-solver", good, "-weights", "a.caffemodel", "-snapshot", "b.solverstate"}, []string{"not both"}},
		{"bad sigint effect", []string{"train", "-solver", good, "-sigint_effect", "explode"}, []string{"sigint_effect", "explode"}},
	}
	for _, c := range cases {
		code, log := gocaffe(t, c.args...)
		if code == 0 || strings.Contains(log, "panic") || strings.Contains(log, "goroutine ") {
			t.Errorf("%s: exit %d, log:\n%s", c.name, code, log)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(log, w) {
				t.Errorf("%s: log lacks %q:\n%s", c.name, w, lastLines(log, 3))
			}
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "nan_iter_*")); len(files) != 0 {
		t.Errorf("a diverged run wrote snapshots: %v", files)
	}
}

// corruptRecordDB writes an LMDB database of 2x2 datums whose fourth record
// is not a Datum, and returns its path.
func corruptRecordDB(t *testing.T, path string) string {
	t.Helper()
	db, err := data.Open(caffepb.DataParameter_LMDB, path, data.New)
	if err != nil {
		t.Fatal(err)
	}
	txn, err := db.NewTransaction()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		v, err := proto.Marshal(&caffepb.Datum{Channels: proto.Int32(1), Height: proto.Int32(2), Width: proto.Int32(2),
			Data: []byte{1, 2, 3, 4}, Label: proto.Int32(int32(i % 2))})
		if err != nil {
			t.Fatal(err)
		}
		if i == 3 {
			v = []byte("\xff\xff\xffgarbage")
		}
		if err := txn.Put(fmt.Appendf(nil, "%08d", i), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFinetuneShapeMismatch: -weights from a net whose layer has another
// shape is refused naming the layer and both shapes.
func TestFinetuneShapeMismatch(t *testing.T) {
	dir := t.TempDir()
	narrow := writeSolver(t, dir, "narrow", "max_iter: 1")
	if code, log := gocaffe(t, "train", "-solver", narrow); code != 0 {
		t.Fatalf("train exited %d:\n%s", code, log)
	}
	model := filepath.Join(dir, "narrow_iter_1.caffemodel")
	wideNet := strings.Replace(teacherNet, "num_output: 3 weight_filler { type: \"gaussian\"", "num_output: 3 weight_filler { type: \"gaussian\"", 1)
	wideNet = strings.Replace(wideNet, `dim: 16 dim: 8`, `dim: 16 dim: 9`, 1)
	netPath := filepath.Join(dir, "wide.prototxt")
	os.WriteFile(netPath, []byte(wideNet), 0o644)
	solverPath := filepath.Join(dir, "wide_solver.prototxt")
	os.WriteFile(solverPath, []byte(fmt.Sprintf("net: %q base_lr: 0.1 lr_policy: \"fixed\" max_iter: 1 snapshot_prefix: %q", netPath, filepath.Join(dir, "wide"))), 0o644)
	code, log := gocaffe(t, "train", "-solver", solverPath, "-weights", model)
	if code == 0 || !strings.Contains(log, `layer "teacher"`) || !strings.Contains(log, "3 8 (24)") || !strings.Contains(log, "3 9 (27)") {
		t.Errorf("exit %d, log:\n%s", code, lastLines(log, 3))
	}
	if _, err := os.Stat(filepath.Join(dir, "wide_iter_1.caffemodel")); err == nil {
		t.Error("a refused finetune still trained and snapshotted")
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
