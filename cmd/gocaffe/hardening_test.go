package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/badinput"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// memoryLimitKB is the address-space limit (ulimit -v) the memory cases
// run under: far below what the bad inputs would take.
const memoryLimitKB = 1500000

// startsUnderLimit says whether gocaffe starts at all under the limit: a
// build linked with the CUDA libraries maps more address space at start
// than the limit allows (the Go runtime cannot initialise its heap), so
// the cases run on the default build, which CI tests.
func startsUnderLimit(t *testing.T) {
	t.Helper()
	probe := exec.Command("sh", "-c", fmt.Sprintf(`ulimit -v %d && exec "$0" device_query`, memoryLimitKB), gocaffeBin)
	probe.Env = append(os.Environ(), "MALLOC_ARENA_MAX=1")
	out, _ := probe.CombinedOutput()
	if strings.Contains(string(out), "runtime.") || strings.Contains(string(out), "fatal error") {
		t.Skipf("this gocaffe build cannot start under ulimit -v %d (the CUDA build maps more at start); the default build runs these cases", memoryLimitKB)
	}
}

// gocaffeLimited runs the command under ulimit -v memoryLimitKB, with a
// deadline so that a hang fails the test instead of stalling it.
func gocaffeLimited(t *testing.T, args ...string) (int, string) {
	t.Helper()
	startsUnderLimit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, memoryLimitKB)
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", script, gocaffeBin}, args...)...)
	// The Go runtime reserves about 1.2 GB of address space at start, and
	// glibc (linked for cgo) 64 MB more per thread for its malloc arenas:
	// at 1.5 GB that leaves the runtime itself short now and then. One
	// arena keeps the limit about the inputs.
	cmd.Env = append(os.Environ(), "MALLOC_ARENA_MAX=1")
	var out bytes.Buffer
	cmd.Stderr, cmd.Stdout = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("gocaffe %v hangs; output:\n%s", args, out.String())
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// TestHardeningThroughTheCommand: each bad input of the hardening issue,
// through gocaffe, under an address-space limit: exit 1 with a message
// naming the layer, field or file; never a stack trace, an out-of-memory
// death or a hang.
func TestHardeningThroughTheCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	solverFor := func(name, net, extra string) string {
		netPath := write(name+".prototxt", []byte(net))
		return write(name+"_solver.prototxt", fmt.Appendf(nil, "net: %q base_lr: 0.1 lr_policy: \"fixed\" max_iter: 2 snapshot_prefix: %q %s", netPath, filepath.Join(dir, name), extra))
	}
	bomb := write("bomb.png", badinput.PNGBomb(20000, 20000))
	imageNet := fmt.Sprintf(`layer { name: "images" type: "ImageData" top: "x" top: "label" image_data_param { source: %q batch_size: 1 } }
layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" inner_product_param { num_output: 2 } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "y" bottom: "label" top: "loss" }`, write("bomb_list.txt", []byte(bomb+" 0\n")))
	poolInPlace := `layer { name: "d" type: "DummyData" top: "x" dummy_data_param { shape { dim: 2 dim: 1 dim: 4 dim: 4 } } }
layer { name: "pool" type: "Pooling" bottom: "x" top: "x" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }`
	badStep := write("bad.solverstate", mustMarshal(t, &caffepb.SolverState{Iter: proto.Int32(10), CurrentStep: proto.Int32(-1)}))
	negIter := write("neg.solverstate", mustMarshal(t, &caffepb.SolverState{Iter: proto.Int32(-10)}))
	good := writeSolver(t, dir, "teacher", "max_iter: 2")

	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"decompression bomb in ImageData", []string{"train", "-solver", solverFor("bomb", imageNet, "")},
			[]string{`layer "images" (ImageData)`, bomb, "20000x20000 pixels is over the limit", "GOCAFFE_MAX_IMAGE_PIXELS"}},
		{"/dev/zero as -weights", []string{"train", "-solver", good, "-weights", "/dev/zero"},
			[]string{"/dev/zero is not a regular file"}},
		{"/dev/zero as -weights of test", []string{"test", "-model", filepath.Join(dir, "teacher.prototxt"), "-weights", "/dev/zero"},
			[]string{"/dev/zero is not a regular file"}},
		{"/dev/zero as the solver", []string{"train", "-solver", "/dev/zero"}, []string{"/dev/zero is not a regular file"}},
		{"pooling in place", []string{"train", "-solver", solverFor("inplace", poolInPlace, "")},
			[]string{`layer "pool" (Pooling) cannot compute in place: top "x" is its bottom`}},
		{"test_iter 0", []string{"train", "-solver", solverFor("testiter", teacherNet, "test_iter: 0 test_interval: 1")},
			[]string{"test_iter must be at least 1"}},
		{"negative current_step", []string{"train", "-solver", solverFor("step", teacherNet, ""), "-snapshot", badStep},
			[]string{badStep, "current_step -1"}},
		{"negative iter", []string{"train", "-solver", solverFor("iter", teacherNet, ""), "-snapshot", negIter},
			[]string{negIter, "iter -10 is negative"}},
		{"convert_imageset resize too large", []string{"convert_imageset", "-resize_height", "100000", "-resize_width", "100000", "/", filepath.Join(dir, "bomb_list.txt"), filepath.Join(dir, "resized_lmdb")},
			[]string{"100000x100000 pixels is over the limit"}},
	}
	for _, c := range cases {
		code, log := gocaffeLimited(t, c.args...)
		if code != 1 || strings.Contains(log, "panic") || strings.Contains(log, "goroutine ") || strings.Contains(log, "fatal error") {
			t.Errorf("%s: exit %d (want 1), log:\n%s", c.name, code, lastLines(log, 8))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(log, w) {
				t.Errorf("%s: log lacks %q:\n%s", c.name, w, lastLines(log, 4))
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "resized_lmdb")); !os.IsNotExist(err) {
		t.Errorf("convert_imageset refused its resize target but left a database behind (%v)", err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "iter_iter_*")); len(files) != 0 {
		t.Errorf("a negative iter produced snapshots: %v", files)
	}
}

// TestConvertImagesetFIFOAndBomb: an image list naming a FIFO and a
// decompression bomb beside a good image converts the good one and skips
// the others with their reasons, without hanging or running out of memory.
func TestConvertImagesetFIFOAndBomb(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.png")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"bomb.png": badinput.PNGBomb(20000, 20000), "good.png": badinput.PNGBomb(4, 3)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(dir, "list.txt")
	os.WriteFile(list, []byte("fifo.png 0\nbomb.png 1\ngood.png 2\n"), 0o644)
	code, log := gocaffeLimited(t, "convert_imageset", dir+"/", list, filepath.Join(dir, "out_lmdb"))
	for _, w := range []string{"fifo.png", "named pipe", "bomb.png", "over the limit", "1 stored"} {
		if !strings.Contains(log, w) {
			t.Errorf("log lacks %q (exit %d):\n%s", w, code, lastLines(log, 6))
		}
	}
}

// TestWeightsCopyingNothingWarnsFirst: an empty weights file, or one whose
// layers match none of the net's, is said as a warning before anything
// else about the run.
func TestWeightsCopyingNothingWarnsFirst(t *testing.T) {
	dir := t.TempDir()
	good := writeSolver(t, dir, "teacher", "max_iter: 1")
	empty := filepath.Join(dir, "empty.caffemodel")
	os.WriteFile(empty, nil, 0o644)
	other := filepath.Join(dir, "other.caffemodel")
	if err := protoio.WriteProtoToBinaryFile(&caffepb.NetParameter{Layer: []*caffepb.LayerParameter{{Name: proto.String("unrelated")}}}, other); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{empty, other} {
		code, log := gocaffe(t, "train", "-solver", good, "-weights", w)
		if code != 0 {
			t.Fatalf("%s: exit %d:\n%s", w, code, lastLines(log, 4))
		}
		warn := strings.Index(log, "No weights were copied")
		solve := strings.Index(log, "Solving")
		if warn < 0 || !strings.HasPrefix(log[strings.LastIndex(log[:max(warn, 0)], "\n")+1:], "W") || (solve >= 0 && solve < warn) {
			t.Errorf("%s: no warning line before solving:\n%s", w, lastLines(log, 20))
		}
	}
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
