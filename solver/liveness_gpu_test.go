package solver_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/cudatest"
	"github.com/gocaffe/gocaffe/solver"
)

// On the GPU too, training with the liveness pass's memory reuse gives the
// losses and weights of training without, bit for bit: with the
// deterministic algorithms (device.Context.SetDeterministic), two runs
// without reuse agree bit for bit, so any difference is the plan's. With
// and without CUDA graphs, on nets with branches, in-place BatchNorm,
// Scale and ReLU (fused on the GPU), pooling, dropout and test nets.
func TestGPUTrainingWithMemoryReuse(t *testing.T) {
	d := cudatest.Device(t)
	for _, tc := range []struct{ name, param string }{{"LeNet", lenetSolver}, {"branches", branchSolver}, {"graph", graphNet}} {
		for _, graphs := range []bool{false, true} {
			name := tc.name + "/eager"
			if graphs {
				name = tc.name + "/graphs"
			}
			t.Run(name, func(t *testing.T) {
				run := func(noReuse bool) (*solver.Solver[float32], []string) {
					ctx := device.New(d)
					ctx.SetDeterministic(true)
					text := tc.param
					if !strings.Contains(text, "max_iter") {
						text += "max_iter: 6\n"
					}
					s, log := graphRunWith(t, text, solver.Options{Context: ctx, NoCUDAGraphs: !graphs, NoMemoryReuse: noReuse},
						func(s *solver.Solver[float32]) error { return s.Solve("") })
					return s, outputLines(log)
				}
				own, ownLog := run(true)
				own2, _ := run(true)
				reuse, reuseLog := run(false)
				if len(ownLog) < 6 || !slices.Equal(ownLog, reuseLog) {
					t.Fatalf("the logs differ:\nown memory:\n%s\nreuse:\n%s", strings.Join(ownLog, "\n"), strings.Join(reuseLog, "\n"))
				}
				sameBits(t, "two runs without reuse", own, own2)
				sameBits(t, "with and without reuse", own, reuse)
				summary := ""
				for _, pass := range reuse.Net().Plan().Passes {
					if pass.Name == "liveness" {
						summary = pass.Summary
					}
				}
				if !strings.HasPrefix(summary, "forward and backward") {
					t.Errorf("train net's liveness pass: %q", summary)
				}
				a, b := reuse.Net().MemoryReport().Activations, own.Net().MemoryReport().Activations
				if a >= b {
					t.Errorf("activations take %d bytes with reuse, %d without", a, b)
				}
				t.Logf("activations %d bytes with reuse, %d without; %s", a, b, summary)
			})
		}
	}
}

var iterRate = regexp.MustCompile(`\([0-9.e+-]+ iter/s, [^)]*\)`)

// outputLines returns the log's loss and output lines without their
// timings.
func outputLines(log string) []string {
	var lines []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "output") || strings.Contains(l, "loss =") {
			_, msg, _ := strings.Cut(l, "msg=")
			lines = append(lines, iterRate.ReplaceAllString(msg, ""))
		}
	}
	return lines
}
