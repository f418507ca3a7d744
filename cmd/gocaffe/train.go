package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
)

// runTrain trains a net from a solver prototxt (Caffe's `caffe train`).
func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("train", stderr)
	solverFile := fs.String("solver", "", "the solver definition protocol buffer text file")
	weights := fs.String("weights", "", "pretrained weights to finetune from: comma-separated .caffemodel files (not with -snapshot)")
	snapshot := fs.String("snapshot", "", "a .solverstate snapshot to resume training from (not with -weights)")
	var iterations int32
	fs.Var(int32Flag{&iterations}, "iterations", "train for this many iterations instead of the solver's max_iter (0: max_iter)")
	sigint := fs.String("sigint_effect", "stop", "what to do on SIGINT: stop, snapshot or none")
	sighup := fs.String("sighup_effect", "snapshot", "what to do on SIGHUP: stop, snapshot or none")
	sigterm := fs.String("sigterm_effect", "stop", "what to do on SIGTERM (docker stop, Kubernetes, Slurm, systemd): stop, snapshot or none; stop writes the final snapshot first, as for SIGINT, and exits with status 143")
	ui := fs.String("ui", "", "serve a live dashboard at this address (:8080 is localhost's port 8080)")
	uiAccess := registerUIAccessFlags(fs)
	shareTest := fs.Bool("share_test_memory", false, "let the test nets compute in the train net's activation memory, which is dead while they run")
	noReuse := fs.Bool("no_memory_reuse", false, "give every blob of the nets memory of its own, as Caffe (the plans' liveness pass off), for a program reading intermediate blobs")
	var lossScale solver.LossScale
	fs.Var(lossScaleFlag{&lossScale}, "loss_scale", "loss scaling: net (the train net's global_grad_scale fields, NVCaffe's), off, static:S, adaptive:K (NVCaffe's global_grad_scale_adaptive), or dynamic[:S[:N]] (PyTorch's GradScaler: first scale S, 65536; doubled after N iterations without overflow, 2000; an overflowing update is skipped and halves it)")
	bucketMiB := fs.Float64("bucket_mib", 0, "in a job of several GPUs, all-reduce the gradients in buckets of about this many MiB while the backward pass runs (0: 1 MiB first, then 25, PyTorch DDP's bucket_cap_mb)")
	hostAhead := fs.Bool("host_ahead", true, "with CUDA graphs, prepare the next iteration and queue its replay before reading the last one's loss, between displays, tests and snapshots (false: wait for each replay, as before)")
	cudaGraphs := fs.Bool("cuda_graphs", true, "on the GPU, record one training iteration as a CUDA graph after two warm-up iterations and replay it (where the net and solver allow; the log says)")
	var nf netFlags
	nf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	stopProfile, err := nf.startProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	if *solverFile == "" {
		fs.Usage()
		return fmt.Errorf("need -solver: the solver prototxt: %w", errUsage)
	}
	if *weights != "" && *snapshot != "" {
		return errors.New("give -snapshot or -weights, not both: -snapshot resumes a run, -weights starts a new one from trained weights")
	}
	onInt, err := parseEffect("sigint_effect", *sigint)
	if err != nil {
		return err
	}
	onHup, err := parseEffect("sighup_effect", *sighup)
	if err != nil {
		return err
	}
	onTerm, err := parseEffect("sigterm_effect", *sigterm)
	if err != nil {
		return err
	}
	if !(*bucketMiB >= 0 && *bucketMiB <= 1<<20) {
		return fmt.Errorf("-bucket_mib %v: want 0 (the default buckets) or a size in MiB", *bucketMiB)
	}
	if iterations < 0 {
		return fmt.Errorf("-iterations %d: want 0 (the solver's max_iter) or more", iterations)
	}
	param := &caffepb.SolverParameter{}
	if err := (protoio.TextOptions{SkipUnknownFields: nf.skipUnknown, Logger: glog.Logger()}).ReadFile(*solverFile, param); err != nil {
		return err
	}
	if iterations > 0 {
		param.MaxIter = int32Ptr(iterations)
	}
	ranks, err := nf.trainRanks(param)
	if err != nil {
		return err
	}
	// Deferred first, so run last: after the solvers' Close, whose CUDA
	// graphs hold the communicators' recorded collectives (NCCL's
	// ncclCommDestroy waits for such graphs to be freed).
	defer closeRanks(ranks)
	quietRank(ranks)
	var actions chan solver.Action
	if *ui != "" {
		d := newTrainDashboard(*solverFile, param)
		stopUI, err := serveDashboard(*ui, uiAccess, d)
		if err != nil {
			return err
		}
		defer stopUI()
		prev := glog.SetOutput(d)
		glog.SetOutput(io.MultiWriter(prev, d))
		defer glog.SetOutput(prev)
		actions = d.actions
	}
	reduced, ownPrecision, err := nf.precisionOptions()
	if err != nil {
		return err
	}
	glog.Infof("Starting Optimization")
	solvers := make([]*solver.Solver[float32], len(ranks))
	for i, r := range ranks {
		s, err := solver.New[float32](param, solver.Options{Context: r.ctx, Logger: glog.Logger(), Comm: r.comm, SolverFile: *solverFile, Stages: nf.stageList(), Level: nf.level, SkipUnknownFields: nf.skipUnknown, ShareTestMemory: *shareTest, NoCUDAGraphs: !*cudaGraphs, NoHostAhead: !*hostAhead, NoMemoryReuse: *noReuse, Precision: reduced, OwnPrecision: ownPrecision, LossScale: lossScale, GradientBucketBytes: int(math.Ceil(*bucketMiB * (1 << 20)))})
		if err != nil {
			return fmt.Errorf("%s: %w", *solverFile, err)
		}
		defer s.Close()
		if *weights != "" {
			if err := s.LoadWeights(*weights); err != nil {
				return err
			}
		}
		solvers[i] = s
		if i == 0 {
			if err := logMemoryPlan(s.Net()); err != nil {
				return err
			}
		}
	}
	logJob(solvers[0], ranks[0].comm)
	// Signals reach the process once: its first solver takes them, and a
	// job's ranks agree on the action at the end of the iteration.
	sig := handleSignals(solvers[0], signalEffects{onInt, onHup, onTerm}, actions)
	defer sig.stop()
	if err := solveAll(solvers, ranks, *snapshot); err != nil {
		return err
	}
	if sig.terminated {
		return terminatedError(solvers[0])
	}
	for i, r := range ranks {
		if d := r.ctx.Device(); d != nil {
			// gocaffe allocates nothing per iteration: what it holds
			// now, the nets still open, is what training held; the peak
			// adds the setup's passing allocations (cuDNN's searches).
			inUse, peak := d.MemStats()
			glog.Infof("Peak device memory on GPU %d: %.1f MiB (held by gocaffe's allocations; %.1f MiB held while training)", d.Ordinal(), float64(peak)/(1<<20), float64(inUse)/(1<<20))
			logHeldMemory(solvers[i], r.ctx, inUse)
		}
	}
	return nil
}

func int32Ptr(v int32) *int32 { return &v }

// parseEffect reads a -sigint_effect, -sighup_effect or -sigterm_effect
// value.
func parseEffect(flagName, v string) (solver.Action, error) {
	switch v {
	case "stop":
		return solver.Stop, nil
	case "snapshot":
		return solver.Snapshot, nil
	case "none":
		return solver.None, nil
	}
	return solver.None, fmt.Errorf("-%s %q: want stop, snapshot or none", flagName, v)
}

// signalEffects are the actions the signals ask for.
type signalEffects struct{ onInt, onHup, onTerm solver.Action }

// signalWatch is the state of handleSignals.
type signalWatch struct {
	ch chan os.Signal
	// terminated says that a SIGTERM stopped training (read after Solve).
	terminated bool
}

func (w *signalWatch) stop() { signal.Stop(w.ch) }

// handleSignals makes SIGINT, SIGHUP and SIGTERM request their actions
// between iterations (and between iter_size passes), as Caffe's
// SignalHandler does for the first two, and so do requests on actions (the
// dashboard's buttons; nil without one). SIGTERM is what docker stop,
// Kubernetes, Slurm's preemption and systemd send before they kill: caught,
// it stops training with a snapshot instead of losing everything since the
// last one.
func handleSignals(s *solver.Solver[float32], e signalEffects, actions <-chan solver.Action) *signalWatch {
	w := &signalWatch{ch: make(chan os.Signal, 4)}
	signal.Notify(w.ch, os.Interrupt, syscall.SIGHUP, syscall.SIGTERM)
	s.SetActionFunc(func() solver.Action {
		select {
		case sig := <-w.ch:
			switch sig {
			case syscall.SIGHUP:
				glog.Infof("Caught SIGHUP: %v", e.onHup)
				return e.onHup
			case syscall.SIGTERM:
				glog.Infof("Caught SIGTERM: %v", e.onTerm)
				w.terminated = w.terminated || e.onTerm == solver.Stop
				return e.onTerm
			}
			glog.Infof("Caught SIGINT: %v", e.onInt)
			return e.onInt
		case a := <-actions:
			glog.Infof("Dashboard asked: %v", a)
			return a
		default:
			return solver.None
		}
	})
	return w
}

// exitTerminated is the exit status of a run stopped by SIGTERM: 128 + 15,
// what a shell reports for a process the signal ended, so that a batch
// system or a script sees that training did not finish (exit 0 would tell
// a Kubernetes Job it had).
const exitTerminated = 143

// terminatedError says where a run that SIGTERM stopped can resume from.
func terminatedError(s *solver.Solver[float32]) error {
	err := fmt.Errorf("stopped by SIGTERM at iteration %d; no snapshot was written (snapshot_after_train is false)", s.Iter())
	switch state := s.LastSnapshot(); {
	case state != "":
		err = fmt.Errorf("stopped by SIGTERM at iteration %d; the last snapshot is %s: resume with -snapshot %s", s.Iter(), state, state)
	case !s.Root():
		err = fmt.Errorf("stopped by SIGTERM at iteration %d; rank 0 writes the job's snapshots", s.Iter())
	}
	return &exitError{code: exitTerminated, err: err}
}

// lossScaleFlag is -loss_scale: a mode and its numbers, checked when the
// flag is parsed (the solver checks their ranges).
type lossScaleFlag struct{ p *solver.LossScale }

func (f lossScaleFlag) String() string {
	if f.p == nil {
		return "net"
	}
	s := f.p.Mode.String()
	if f.p.Scale != 0 {
		s += ":" + strconv.FormatFloat(f.p.Scale, 'g', -1, 64)
	}
	if f.p.GrowthInterval != 0 {
		s += ":" + strconv.Itoa(f.p.GrowthInterval)
	}
	return s
}

func (f lossScaleFlag) Set(v string) error {
	mode, rest, _ := strings.Cut(v, ":")
	var args []string
	if rest != "" || strings.HasSuffix(v, ":") {
		args = strings.Split(rest, ":")
	}
	c := solver.LossScale{}
	most := 0 // numbers the mode takes
	switch mode {
	case "net":
		c.Mode = solver.LossScaleFromNet
	case "off":
		c.Mode = solver.LossScaleOff
	case "static":
		c.Mode, most = solver.LossScaleStatic, 1
	case "adaptive":
		c.Mode, most = solver.LossScaleAdaptive, 1
	case "dynamic":
		c.Mode, most = solver.LossScaleDynamic, 2
	default:
		return fmt.Errorf("%q: want net, off, static:S, adaptive:K or dynamic[:S[:N]]", v)
	}
	if len(args) > most {
		return fmt.Errorf("%q: %s takes at most %d number(s) after it", v, mode, most)
	}
	if (mode == "static" || mode == "adaptive") && len(args) == 0 {
		return fmt.Errorf("%q: %s needs its scale: %s:1024", v, mode, mode)
	}
	if len(args) > 0 {
		scale, err := strconv.ParseFloat(args[0], 64)
		if err != nil || !(scale > 0) || math.IsInf(scale, 0) {
			return fmt.Errorf("%q: the scale %q is not a positive number", v, args[0])
		}
		c.Scale = scale
	}
	if len(args) > 1 {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 {
			return fmt.Errorf("%q: the growth interval %q is not a positive integer", v, args[1])
		}
		c.GrowthInterval = n
	}
	*f.p = c
	return nil
}

// logHeldMemory logs what the device memory held while training went to:
// the nets' plans (MemoryReport), the layers' own memory, the context's
// workspace, and the rest (the solver's history, other buffers).
func logHeldMemory(s *solver.Solver[float32], ctx *device.Context, held int) {
	plans, own := 0, 0
	for _, n := range append([]*net.Net[float32]{s.Net()}, s.TestNets()...) {
		plans += n.MemoryReport().Total()
		for _, u := range n.LayersDeviceMemory() {
			own += u.Bytes
		}
	}
	ws := ctx.WorkspaceBytes()
	mb := func(b int) float64 { return float64(b) / (1 << 20) }
	glog.Infof("Held while training: the nets' plans %.1f MiB, the layers' own %.1f MiB, workspace %.1f MiB, the rest %.1f MiB (the solver's history, other buffers)",
		mb(plans), mb(own), mb(ws), mb(held-plans-own-ws))
}
