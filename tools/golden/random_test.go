package golden

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/internal/randnet"
	"github.com/gocaffe/gocaffe/net"
)

// TestRandomNetsAgainstCaffe draws nets of one layer under test with
// random parameters and input shapes (the combinations the checked-in
// fixtures do not name: odd pads against strides, dilations, negative
// axes, N-D kernels, ...), runs each in BVLC Caffe through golden_dump and
// compares gocaffe with it as TestGolden does. It needs the tool:
// GOCAFFE_GOLDEN_DUMP names it (tools/golden/build.sh prints its path);
// GOCAFFE_GOLDEN_RANDOM is the number of nets (default 100) and
// GOCAFFE_GOLDEN_RANDOM_SEED the first seed (default 1);
// GOCAFFE_GOLDEN_RANDOM_ONLY keeps the nets of one generator (pooling,
// convolution, ...). A net Caffe
// refuses (a CHECK failure) is skipped: gocaffe need not refuse it too.
func TestRandomNetsAgainstCaffe(t *testing.T) {
	dump := os.Getenv("GOCAFFE_GOLDEN_DUMP")
	if dump == "" {
		t.Skip("GOCAFFE_GOLDEN_DUMP is not set: the path of golden_dump (tools/golden/build.sh)")
	}
	count, first := envInt(t, "GOCAFFE_GOLDEN_RANDOM", 100), envInt(t, "GOCAFFE_GOLDEN_RANDOM_SEED", 1)
	refused, only := 0, os.Getenv("GOCAFFE_GOLDEN_RANDOM_ONLY")
	dbs, err := randnet.WriteDBs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for seed := first; seed < first+count; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
		g := randnet.Generators[r.IntN(len(randnet.Generators))]
		text := g.Net(r, dbs).Text()
		if only != "" && g.Name != only {
			continue
		}
		t.Run(fmt.Sprintf("%d_%s", seed, g.Name), func(t *testing.T) {
			dir := t.TempDir()
			model := filepath.Join(dir, "net.prototxt")
			if err := os.WriteFile(model, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			fixture := filepath.Join(dir, "net.golden.gz")
			cmd := exec.Command(dump, model, filepath.Join(dir, "net.golden"))
			cmd.Env = append(os.Environ(), "GLOG_minloglevel=2")
			if out, err := cmd.CombinedOutput(); err != nil {
				refused++
				t.Skipf("Caffe refuses the net (%v): %s; gocaffe: %s\n%s", err, fatalLine(string(out)), gocaffeVerdict(model), text)
			}
			if err := gzipFile(filepath.Join(dir, "net.golden"), fixture); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the net:\n%s", text)
				}
			})
			c := &checker{t: t, fixture: g.Name, model: model, tolerance: layerTolerance}
			if g.Name == "chain" { // errors grow through the layers, as in the models
				// A bias's gradient sums a whole top's, which can cancel
				// (8.3e-5 from terms of 1e-2, seed 160): values are
				// measured on a scale of at least 1e-3.
				c.tolerance, c.absFloor = modelTolerance, 1e-3
				if strings.Contains(text, "BatchNorm") {
					// The gradient of the weights before a BatchNorm is
					// orthogonal to them (the output does not change with
					// their scale): a sum that cancels, its rounding
					// errors up to 2.6e-3 of its largest value. And a
					// gradient BatchNorm makes zero in exact arithmetic
					// (a bias or a shift before it) is rounding errors of
					// a few 1e-6 in both.
					c.tolerance = 5e-3
				}
			}
			c.run(fixture)
		})
	}
	t.Logf("%d of %d nets refused by Caffe", refused, count)
}

// gocaffeVerdict says what gocaffe makes of a net Caffe refuses: whether
// it builds it and runs a pass (a difference to look at, not a failure:
// some of Caffe's refusals are limits gocaffe need not share).
func gocaffeVerdict(model string) string {
	n, err := net.NewFromFile[float32](model, net.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return "refuses it too: " + err.Error()
	}
	defer n.Close()
	if _, err := n.Forward(); err != nil {
		return "builds it, and its forward pass fails: " + err.Error()
	}
	return "builds and runs it"
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: want an integer", name, s)
	}
	return v
}

// fatalLine is the line of glog's output that says why Caffe stopped.
func fatalLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "F") || strings.Contains(l, "Check failed") {
			return l
		}
	}
	return strings.TrimSpace(s)
}

// gzipFile writes src gzipped to dst, the fixture format.
func gzipFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	if err := w.Close(); err != nil {
		return err
	}
	return os.WriteFile(dst, out.Bytes(), 0o644)
}
