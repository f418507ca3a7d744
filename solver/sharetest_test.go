package solver_test

import (
	"bytes"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
)

// shareNet trains a small convolutional classifier on refilled Gaussian
// DummyData (one label per net), with a test net of the same batch and one of a larger batch.
const shareNet = `
net_param {
  name: "share"
  layer { name: "data" type: "DummyData" top: "data" top: "label" include { phase: TRAIN }
    dummy_data_param { shape { dim: 16 dim: 2 dim: 8 dim: 8 } shape { dim: 16 }
      data_filler { type: "gaussian" std: 1 } data_filler { type: "constant" value: 1 } } }
  layer { name: "data" type: "DummyData" top: "data" top: "label" include { phase: TEST stage: "small" }
    dummy_data_param { shape { dim: 16 dim: 2 dim: 8 dim: 8 } shape { dim: 16 }
      data_filler { type: "gaussian" std: 1 } data_filler { type: "constant" value: 2 } } }
  layer { name: "data" type: "DummyData" top: "data" top: "label" include { phase: TEST stage: "large" }
    dummy_data_param { shape { dim: 40 dim: 2 dim: 8 dim: 8 } shape { dim: 40 }
      data_filler { type: "gaussian" std: 1 } data_filler { type: "constant" value: 3 } } }
  layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
    convolution_param { num_output: 4 kernel_size: 3 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
  layer { name: "pool" type: "Pooling" bottom: "conv" top: "pool" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
  layer { name: "ip" type: "InnerProduct" bottom: "pool" top: "ip"
    inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
  layer { name: "accuracy" type: "Accuracy" bottom: "ip" bottom: "label" top: "accuracy" include { phase: TEST } }
}
test_state { stage: "small" } test_iter: 3
test_state { stage: "large" } test_iter: 2
test_interval: 4 test_initialization: true
base_lr: 0.05 momentum: 0.9 lr_policy: "fixed" max_iter: 12 display: 1
random_seed: 5 snapshot_after_train: false
`

// Test nets computing in the train net's activation memory
// (Options.ShareTestMemory) test and train exactly as with their own: the
// same test outputs, losses and weights; and both test nets' computed
// blobs that fit do use the train net's memory.
func TestShareTestMemory(t *testing.T) {
	rate := regexp.MustCompile(`\([0-9.e+-]+ iter/s, [^)]*\)`)
	run := func(share bool) (*solver.Solver[float32], []string) {
		var buf bytes.Buffer
		p := &caffepb.SolverParameter{}
		if err := protoio.ParseText([]byte(shareNet), p); err != nil {
			t.Fatal(err)
		}
		s, err := solver.New[float32](p, solver.Options{
			ShareTestMemory: share, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Solve(""); err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(buf.String(), "\n") {
			if strings.Contains(l, "output") || strings.Contains(l, "loss") {
				_, msg, _ := strings.Cut(l, "msg=")
				lines = append(lines, rate.ReplaceAllString(msg, ""))
			}
		}
		return s, lines
	}
	own, ownLog := run(false)
	shared, sharedLog := run(true)
	if len(ownLog) < 10 || !slices.Equal(ownLog, sharedLog) {
		t.Fatalf("the logs differ:\nown memory:\n%s\nshared:\n%s", strings.Join(ownLog, "\n"), strings.Join(sharedLog, "\n"))
	}
	for i, p := range own.Net().LearnableParams() {
		if !slices.Equal(p.CPUData(), shared.Net().LearnableParams()[i].CPUData()) {
			t.Errorf("parameter %d differs after training", i)
		}
	}
	for i, tn := range shared.TestNets() {
		borrowed := 0
		plan := tn.Plan()
		for _, name := range []string{"conv", "pool", "ip"} {
			k := slices.IndexFunc(plan.Blobs, func(b net.BlobPlan) bool { return b.Name == name })
			if k >= 0 && strings.HasPrefix(plan.Blobs[k].SharesWith, "net ") {
				borrowed++
			}
		}
		// The test nets' blobs sit in the arenas of their plans'
		// liveness pass, which borrow the train net's where they fit
		// (with the Split tops aliasing ip, which loss and accuracy
		// read): the small net's three are in the train net's memory.
		// Of the large net's (40 images), conv does not fit, and one
		// other lies past the end of the train net's arena.
		if want := map[int]int{0: 3, 1: 1}[i]; borrowed != want {
			t.Errorf("test net %d: %d of conv, pool, ip in the train net's memory, want %d", i, borrowed, want)
		}
		// Its report counts only what did not fit: nothing for the small
		// net, no more than its own plan's arena for the large one.
		arena := -1
		for _, m := range tn.MemoryReport().Memories {
			if strings.HasPrefix(m.What, "arena (in another net's arena") {
				arena = m.Bytes
			}
		}
		ownArena := 0
		for _, m := range own.TestNets()[i].MemoryReport().Memories {
			if strings.HasPrefix(m.What, "arena: ") {
				ownArena = m.Bytes
			}
		}
		if (i == 0 && arena != 0) || (i == 1 && (arena <= 0 || arena > ownArena)) {
			t.Errorf("test net %d: the report counts %d bytes of a borrowed arena, %d without borrowing", i, arena, ownArena)
		}
	}
}
