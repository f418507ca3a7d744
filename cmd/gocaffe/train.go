package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/gocaffe/gocaffe/internal/glog"
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
	iterations := fs.Int("iterations", 0, "train for this many iterations instead of the solver's max_iter (0: max_iter)")
	sigint := fs.String("sigint_effect", "stop", "what to do on SIGINT: stop, snapshot or none")
	sighup := fs.String("sighup_effect", "snapshot", "what to do on SIGHUP: stop, snapshot or none")
	ui := fs.String("ui", "", "serve a live dashboard at this address (:8080 is localhost's port 8080)")
	uiAccess := registerUIAccessFlags(fs)
	shareTest := fs.Bool("share_test_memory", false, "let the test nets compute in the train net's activation memory, which is dead while they run")
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
	param := &caffepb.SolverParameter{}
	if err := (protoio.TextOptions{SkipUnknownFields: nf.skipUnknown, Logger: glog.Logger()}).ReadFile(*solverFile, param); err != nil {
		return err
	}
	if *iterations > 0 {
		param.MaxIter = int32Ptr(int32(*iterations))
	}
	ranks, err := nf.trainRanks(param)
	if err != nil {
		return err
	}
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
	glog.Infof("Starting Optimization")
	solvers := make([]*solver.Solver[float32], len(ranks))
	for i, r := range ranks {
		s, err := solver.New[float32](param, solver.Options{Context: r.ctx, Logger: glog.Logger(), Comm: r.comm, SolverFile: *solverFile, Stages: nf.stageList(), Level: int32(nf.level), SkipUnknownFields: nf.skipUnknown, ShareTestMemory: *shareTest, NoCUDAGraphs: !*cudaGraphs})
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
	}
	defer closeRanks(ranks)
	logJob(solvers[0], ranks[0].comm)
	// Signals reach the process once: its first solver takes them, and a
	// job's ranks agree on the action at the end of the iteration.
	stop := handleSignals(solvers[0], onInt, onHup, actions)
	defer stop()
	if err := solveAll(solvers, ranks, *snapshot); err != nil {
		return err
	}
	for _, r := range ranks {
		if d := r.ctx.Device(); d != nil {
			_, peak := d.MemStats()
			glog.Infof("Peak device memory on GPU %d: %.1f MiB (held by gocaffe's allocations)", d.Ordinal(), float64(peak)/(1<<20))
		}
	}
	return nil
}

func int32Ptr(v int32) *int32 { return &v }

// parseEffect reads a -sigint_effect/-sighup_effect value.
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

// handleSignals makes SIGINT and SIGHUP request their actions between
// iterations, as Caffe's SignalHandler, and so do requests on actions (the
// dashboard's buttons; nil without one); the returned function undoes it.
func handleSignals(s *solver.Solver[float32], onInt, onHup solver.Action, actions <-chan solver.Action) func() {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGHUP)
	s.SetActionFunc(func() solver.Action {
		select {
		case sig := <-ch:
			if sig == syscall.SIGHUP {
				glog.Infof("Caught SIGHUP: %v", onHup)
				return onHup
			}
			glog.Infof("Caught SIGINT: %v", onInt)
			return onInt
		case a := <-actions:
			glog.Infof("Dashboard asked: %v", a)
			return a
		default:
			return solver.None
		}
	})
	return func() { signal.Stop(ch) }
}
