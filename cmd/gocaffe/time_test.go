package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// gocaffe time reports per-layer times as Caffe's, and GFLOP/s for the
// layers that count their operations (convolution, inner product) alone.
func TestTimeReportsGFLOPs(t *testing.T) {
	net := filepath.Join(t.TempDir(), "net.prototxt")
	os.WriteFile(net, []byte(`
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 4 dim: 3 dim: 12 dim: 12 } } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv" convolution_param { num_output: 8 kernel_size: 3 } }
layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "ip" inner_product_param { num_output: 5 } }
`), 0o644)
	code, log := gocaffe(t, "time", "-model", net, "-iterations", "3")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, log)
	}
	rate := regexp.MustCompile(`^\s*(\w+)\t(forward|backward): [0-9.e-]+ ms\.( \([0-9.]+ GFLOP/s\))?$`)
	seen := map[string]bool{}
	for _, line := range strings.Split(log, "\n") {
		_, msg, ok := strings.Cut(line, "] ")
		if !ok {
			continue
		}
		m := rate.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		hasRate := m[3] != ""
		if want := m[1] == "conv" || m[1] == "ip"; hasRate != want {
			t.Errorf("%q: GFLOP/s shown %v, want %v", msg, hasRate, want)
		}
		seen[m[1]+" "+m[2]] = true
	}
	for _, l := range []string{"conv forward", "conv backward", "ip forward", "relu backward"} {
		if !seen[l] {
			t.Errorf("no %s time in the log:\n%s", l, log)
		}
	}
}

// -cpuprofile writes a CPU profile of the run (gzip-compressed protobuf,
// as runtime/pprof writes it), and a file that cannot be created is an
// error naming the flag.
func TestCPUProfileFlag(t *testing.T) {
	dir := t.TempDir()
	net := filepath.Join(dir, "net.prototxt")
	os.WriteFile(net, []byte(`
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 4 dim: 3 dim: 12 dim: 12 } } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv" convolution_param { num_output: 8 kernel_size: 3 } }
`), 0o644)
	prof := filepath.Join(dir, "cpu.pprof")
	if code, log := gocaffe(t, "time", "-model", net, "-iterations", "2", "-cpuprofile", prof); code != 0 {
		t.Fatalf("exit %d\n%s", code, log)
	}
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("the profile is %d bytes, not gzip data", len(b))
	}
	code, log := gocaffe(t, "time", "-model", net, "-iterations", "1", "-cpuprofile", filepath.Join(dir, "missing", "cpu.pprof"))
	if code == 0 || !strings.Contains(log, "-cpuprofile") {
		t.Errorf("exit %d for a profile in a missing directory, want an error naming -cpuprofile:\n%s", code, log)
	}
}

// gocaffe time -plan prints the net's execution plan, a line per layer,
// and times nothing.
func TestTimePlan(t *testing.T) {
	net := filepath.Join(t.TempDir(), "net.prototxt")
	os.WriteFile(net, []byte(`name: "tiny"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 4 dim: 3 dim: 12 dim: 12 } } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv" convolution_param { num_output: 8 kernel_size: 3 } }
layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
`), 0o644)
	cmd := exec.Command(gocaffeBin, "time", "-model", net, "-plan")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	log := string(out) // the plan goes to standard output, the log lines to standard error
	for _, want := range []string{`Plan of net "tiny" (TRAIN)`, "engines:", "fusion:", "cuda-graph:", "memory:", "conv", "Convolution", "relu"} {
		if !strings.Contains(log, want) {
			t.Errorf("output lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(stderr.String(), "Benchmark begins") {
		t.Errorf("-plan timed the net:\n%s", log)
	}
}
