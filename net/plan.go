package net

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"unsafe"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Plan is how a net executes, as decided by named passes over the built
// net, in order: "engines" (which engine each layer's SetUp chose),
// "fusion" (which layers compute the passes of the layer after them),
// "cuda-graph" (which part of an iteration a recorded CUDA graph may
// replay), "liveness" (which blobs' values are never needed at once, and
// share memory: plan_liveness.go), "memory" (which blobs share memory) and
// "precision" (what each
// layer computes in, and what NVCaffe's fields asked); a solver's test nets
// add "borrow" (the train net's activations they reuse,
// BorrowActivations). A pass never changes Caffe's numbers: a fused pair
// leaves every blob's data and diff as the two layers would.
//
// The decisions that are still to come, reduced precision and layout,
// inference folding, belong here as passes too, so that
// one place says how a net runs. String prints it (`gocaffe time -plan`).
type Plan struct {
	Net    string
	Phase  caffepb.Phase
	Passes []PassReport // in the order they ran
	Layers []LayerPlan
	Blobs  []BlobPlan
}

// PassReport is what one pass decided, in a line.
type PassReport struct {
	Name, Summary string
}

// LayerPlan is one layer's part of a plan.
type LayerPlan struct {
	Name, Type string
	// Engine is the engine computing the layer: "CUDNN", "CAFFE" (gocaffe's
	// own GPU half) or "host" (its CPU half).
	Engine string
	// ComputedBy names the layer before it whose engine computes this
	// layer's passes ("" for none); ForwardOnly says only its forward pass.
	ComputedBy  string
	ForwardOnly bool
	// Graph says whether a recorded CUDA graph replays the layer's passes
	// ("" when it does, else why not).
	Graph string
	// Folded says what the fold pass did with the layer ("into conv1":
	// its forward pass is computed by that layer's folded weights;
	// "computed with conv11_mbox_loc": a producer whose folded pass that
	// layer's computes with its own, reading the same bottom
	// (plan_siblings.go); "removed": only its Reshape runs; "without backward state": its
	// forward pass skips what only its backward pass reads,
	// layer.InferenceOnly); "" for nothing.
	Folded string
	// Precision is what the layer computes in: "FP32", "TF32" (float32
	// blobs, TF32 tensor-core products), "FP64", or a 16-bit type
	// ("FLOAT16", "BFLOAT16": see the precision pass). Asked is what NVCaffe's
	// precision fields ask of it where that is narrower than FLOAT
	// ("FLOAT16/FLOAT16", forward/backward), "" otherwise.
	Precision, Asked string
}

// BlobPlan is one named blob's memory in a plan.
type BlobPlan struct {
	Name  string
	Shape []int
	Bytes int // its data, at the shape it had when the pass ran
	// SharesWith names the blob whose data memory it uses ("" for its
	// own): the bottom of a Split or Flatten, a parameter, or a train
	// net's blob it borrows ("train net's conv1").
	SharesWith string
	// Storage is what the device stores its data and diff in: "" for the
	// net's own type, "FLOAT16" or "BFLOAT16" (the precision pass).
	Storage string
}

// Plan returns the net's plan: a copy, which the net's later passes
// (BorrowActivations) do not change.
func (n *Net[T]) Plan() Plan {
	p := *n.plan
	p.Passes, p.Layers, p.Blobs = slices.Clone(p.Passes), slices.Clone(p.Layers), slices.Clone(p.Blobs)
	return p
}

// Pass returns the report of the pass named name ("fusion", "precision",
// ...), or a zero report if the plan has none of that name.
func (p Plan) Pass(name string) PassReport {
	for _, r := range p.Passes {
		if r.Name == name {
			return r
		}
	}
	return PassReport{}
}

// makePlan runs the build-time passes over the net, once its layers are
// set up.
func (n *Net[T]) makePlan() {
	n.plan = &Plan{Net: n.name, Phase: n.phase, Layers: make([]LayerPlan, len(n.layers))}
	for i, r := range n.layers {
		n.plan.Layers[i] = LayerPlan{Name: r.name, Type: r.layer.Type()}
	}
	for _, pass := range []struct {
		name string
		run  func() string
	}{
		{"engines", n.planEngines},
		{"precision", n.planPrecision},
		{"fusion", n.planFusion},
		{"fold", n.planFold},
		{"cuda-graph", n.planGraph},
		{"liveness", n.planLiveness},
		{"memory", n.planMemory},
	} {
		n.plan.Passes = append(n.plan.Passes, PassReport{pass.name, pass.run()})
	}
}

// planEngines records the engine each layer's SetUp chose.
func (n *Net[T]) planEngines() string {
	counts := map[string]int{}
	for i, r := range n.layers {
		b := r.layer.LayerBase()
		e := "host"
		if b.EngineOnGPU() {
			e = b.EngineName().String()
		}
		n.plan.Layers[i].Engine = e
		counts[e]++
	}
	return fmt.Sprintf("%d layers: %d CUDNN, %d CAFFE on the GPU, %d host", len(n.layers), counts["CUDNN"], counts["CAFFE"], counts["host"])
}

// planFusion offers each pair of consecutive layers to layer.Fuse, which
// lets the first compute the second where its engine can (BatchNorm and
// the Scale and ReLU after it, on cuDNN and on the host in training; see
// layer.Fuser). Not with
// debug_info, which logs each layer's tops after its own pass, as in
// Caffe.
func (n *Net[T]) planFusion() string {
	if n.debugInfo {
		return "none: debug_info logs each layer's own pass"
	}
	pairs := map[string]int{}
	for i := 0; i+1 < len(n.layers); i++ {
		a, b := &n.layers[i], &n.layers[i+1]
		needBackward := a.needBackward
		if !n.ctx.OnGPU() {
			// A host net that runs no backward pass folds such pairs
			// into the layer before them instead (plan_fold.go).
			needBackward = n.runsBackward(i)
		}
		if needBackward && n.readsOverwrittenData(i+1) {
			continue
		}
		if !layer.Fuse(a.layer, b.layer, a.tops, b.bottoms, b.tops, needBackward) {
			continue
		}
		by, forwardOnly := b.layer.LayerBase().ComputedBy()
		byName := a.name
		if by != nil {
			byName = by.LayerBase().Name()
		}
		n.plan.Layers[i+1].ComputedBy, n.plan.Layers[i+1].ForwardOnly = byName, forwardOnly
		n.fused = append(n.fused, i)
		pairs[a.layer.Type()+"+"+b.layer.Type()]++
	}
	if len(n.fused) == 0 {
		return "no layer computes another's passes"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(pairs)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, pairs[k]))
	}
	return fmt.Sprintf("%d layers computed by the layer before them (%s)", len(n.fused), strings.Join(parts, ", "))
}

// readsOverwrittenData says whether layer i runs in place on a blob that a
// later layer writes in place too, with a backward pass that reads the
// blob's data as that layer left it (Spec.BackwardReadsLaterData): fused,
// it would compute from values of its own instead.
func (n *Net[T]) readsOverwrittenData(i int) bool {
	r := &n.layers[i]
	spec, ok := layer.SpecOf(r.layer.Type())
	if !ok || !spec.BackwardReadsLaterData || len(r.tops) != 1 || len(r.bottoms) != 1 || r.tops[0] != r.bottoms[0] {
		return false
	}
	for _, later := range n.layers[i+1:] {
		if slices.Contains(later.tops, r.tops[0]) {
			return true
		}
	}
	return false
}

// planGraph records which layers a CUDA graph may record (RecordableFrom).
func (n *Net[T]) planGraph() string {
	start := n.SourceLayers()
	var first error
	for i, r := range n.layers {
		switch {
		case i < start:
			n.plan.Layers[i].Graph = "a data layer: runs on the host before each replay"
		case n.debugInfo:
			n.plan.Layers[i].Graph = "debug_info reads every blob back"
		default:
			if err := layer.Recordable(r.layer); err != nil {
				n.plan.Layers[i].Graph = err.Error()
				if first == nil {
					first = err
				}
			}
		}
	}
	switch {
	case !n.ctx.OnGPU():
		return "none: the net runs on the host"
	case n.debugInfo:
		return "none: debug_info reads every blob back after each layer"
	case start == len(n.layers):
		return "none: no layer after the data layers"
	case first != nil:
		return "none: " + first.Error()
	}
	return fmt.Sprintf("layers %d to %d replay from a graph, the data layers before them run on the host", start, len(n.layers)-1)
}

// planMemory records the blobs and which share data memory.
func (n *Net[T]) planMemory() string {
	owner := map[any]string{} // a blob's data memory: the first blob seen using it
	shared, total := 0, 0
	n.plan.Blobs = make([]BlobPlan, len(n.blobs))
	for i, r := range n.blobs {
		bp := BlobPlan{Name: r.name, Shape: r.blob.Shape(), Bytes: dataBytes(r.blob)}
		if st := r.blob.Storage(); st.Reduced() {
			bp.Storage, bp.Bytes = st.String(), r.blob.Count()*2
		}
		if m := r.blob.Data(); m != nil {
			if o, ok := owner[m]; ok {
				bp.SharesWith = o
				shared++
			} else {
				owner[m] = r.name
				total += bp.Bytes
			}
		}
		n.plan.Blobs[i] = bp
	}
	return fmt.Sprintf("%d blobs in %s of data; %d share another's memory", len(n.blobs), mib(total), shared)
}

// planBorrow records what BorrowActivations lent n from a train net:
// which of n's blobs now use the memory of which of from's.
func (n *Net[T]) planBorrow(from *Net[T], lent int) {
	names := map[any]string{}
	for _, r := range from.blobs {
		if m := r.blob.Data(); m != nil {
			if _, ok := names[m]; !ok {
				names[m] = r.name
			}
		}
	}
	inArena := map[any]bool{} // n's placed memories in from's arena
	for _, u := range n.uses {
		if u.lent {
			inArena[u.mem] = true
		}
	}
	borrowed := 0
	for i, r := range n.blobs {
		m := r.blob.Data()
		if m == nil {
			continue
		}
		if name, ok := names[m]; ok {
			n.plan.Blobs[i].SharesWith = fmt.Sprintf("net %q's %s", from.name, name)
			borrowed++
		} else if inArena[m] {
			n.plan.Blobs[i].SharesWith = fmt.Sprintf("net %q's arena", from.name)
			borrowed++
		}
	}
	n.plan.Passes = append(n.plan.Passes, PassReport{"borrow", fmt.Sprintf("%d blobs use net %q's activations (%s)", borrowed, from.name, mib(lent))})
}

func dataBytes[T Float](b *blob.Blob[T]) int {
	var zero T
	return b.Count() * int(unsafe.Sizeof(zero))
}

func mib(bytes int) string { return fmt.Sprintf("%.1f MiB", float64(bytes)/(1<<20)) }

// String prints the plan: its passes, then a line per layer and per blob.
func (p Plan) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Plan of net %q (%v):\n", p.Net, p.Phase)
	w := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	for _, pass := range p.Passes {
		fmt.Fprintf(w, "  %s:\t%s\n", pass.Name, pass.Summary)
	}
	w.Flush()
	sb.WriteString("Layers:\n")
	w = tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "  #\tlayer\ttype\tengine\tcomputed by\tCUDA graph\tprecision\n")
	for i, l := range p.Layers {
		by := "-"
		if l.ComputedBy != "" {
			by = l.ComputedBy
			if l.ForwardOnly {
				by += " (forward)"
			}
		}
		if l.Folded != "" {
			by = "folded " + l.Folded
		}
		graph := "yes"
		if l.Graph != "" {
			graph = "no"
		}
		precision := l.Precision
		if l.Asked != "" {
			precision += " (asks " + l.Asked + ")"
		}
		fmt.Fprintf(w, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\n", i, l.Name, l.Type, l.Engine, by, graph, precision)
	}
	w.Flush()
	sb.WriteString("Blobs:\n")
	w = tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "  blob\tshape\tdata\tmemory\n")
	for _, b := range p.Blobs {
		mem := "own"
		if b.SharesWith != "" {
			mem = "shares " + b.SharesWith + "'s"
		}
		if b.Storage != "" {
			mem += ", " + b.Storage
		}
		fmt.Fprintf(w, "  %s\t%v\t%s\t%s\n", b.Name, b.Shape, mib(b.Bytes), mem)
	}
	w.Flush()
	return sb.String()
}
