// Package solver trains nets the way Caffe's solvers do: SGD, Nesterov,
// AdaGrad, RMSProp, AdaDelta and Adam with Caffe's exact update rules; the
// learning rate policies fixed, step, exp, inv, multistep, poly and
// sigmoid; L2 and L1 weight decay; gradient clipping; iter_size gradient
// accumulation; periodic testing; and snapshots in Caffe's own formats
// (<prefix>_iter_<N>.caffemodel and .solverstate), from which training
// resumes exactly where it stopped.
//
// Log lines keep Caffe's wording ("Iteration 100, loss = 0.3", "Test net
// output #0: accuracy = 0.98") so tools that parse Caffe logs work.
package solver

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/parallel"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// Action is what the solver does when asked between iterations (by a
// signal, in the command line tool).
type Action int

// The actions, as Caffe's SolverAction.
const (
	None Action = iota
	Stop
	Snapshot
)

// String names the action as the command's flags do.
func (a Action) String() string {
	switch a {
	case None:
		return "none"
	case Stop:
		return "stop"
	case Snapshot:
		return "snapshot"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Options configures a solver.
type Options struct {
	// Context is the device the nets and the update run on; nil runs them
	// on the CPU.
	Context *device.Context
	// SolverFile is the solver prototxt the parameter came from; an empty
	// or directory snapshot_prefix is completed from its name, as Caffe
	// does.
	SolverFile string
	// Stages and Level are added to the train and test nets' states (the
	// command line's -stage and -level).
	Stages []string
	Level  int32
	// Logger receives the solver's log lines and its nets': Caffe's
	// wording ("Iteration 100, loss = 0.3"), the details of building the
	// nets at slog.LevelDebug, training's progress at Info, and warnings.
	// nil means slog.Default(): a program's default logger shows the
	// progress and warnings, slog.New(slog.DiscardHandler) silences the
	// solver. The gocaffe command gives a handler that writes Caffe's glog
	// lines.
	Logger *slog.Logger
	// Comm makes the solver one rank of a data-parallel job (package
	// parallel): rank 0's weights are broadcast at the start, every
	// rank's gradients are averaged over the ranks before each update,
	// each rank's Data layers read their share of the records, and rank 0
	// alone has test nets, displays, tests and snapshots. Every rank runs
	// the net's own batch, so the effective batch is the number of ranks
	// times it (Caffe's multi-GPU semantics). The caller makes and closes
	// the Comm; with a Comm, Context must be the Comm's device (a host
	// context for CPU ranks: device.New(nil)), and its shard is set here.
	Comm parallel.Comm
	// SkipUnknownFields makes the solver and net prototxts' fields that
	// gocaffe's schema does not have (a Caffe fork's never seen) warnings
	// instead of errors.
	SkipUnknownFields bool
	// ShareTestMemory lets each test net compute in the train net's
	// activation memory (net.BorrowActivations), which is dead while a
	// test runs between iterations: a test net of the train net's batch
	// then adds almost no memory. Off by default, as in Caffe.
	ShareTestMemory bool
	// NoMemoryReuse gives every blob of the nets memory of its own, as in
	// Caffe (net.Options.NoMemoryReuse): for a program that reads the
	// nets' intermediate blobs between iterations.
	NoMemoryReuse bool
	// Precision is the train and test nets' net.Options.Precision: a
	// 16-bit type for mixed precision on the GPU (the weights and their
	// history stay in the solver's FP32), or StorageNative for what the
	// nets' NVCaffe precision fields ask.
	Precision syncedmem.Storage
	// OwnPrecision is the nets' net.Options.OwnPrecision: NVCaffe's
	// precision fields ignored.
	OwnPrecision bool
	// NoCUDAGraphs trains on the GPU without recording an iteration as a
	// CUDA graph. By default, a solver on the GPU whose iteration can be
	// recorded (see iterationGraph) records one after two warm-up
	// iterations and replays it, one launch an iteration; the log says
	// when it does, or why it cannot.
	NoCUDAGraphs bool
	// NoHostAhead makes the host wait for each replayed iteration and
	// read its loss before it prepares the next. By default, where
	// nothing reads an iteration's results before the next begins (no
	// display, test, snapshot or end of Step in between), the host runs
	// the next iteration's data layers and queues its replay first, and
	// reads the loss after: the same numbers, without the device waiting
	// for the host between iterations. For comparing the two.
	NoHostAhead bool
	// NoGradientOverlap makes a GPU rank of a job (Comm on a GPU) reduce
	// its gradients after the backward pass instead of bucket by bucket
	// while it runs (parallel.GradientBuckets): the same numbers, later.
	// For comparing the two.
	NoGradientOverlap bool
	// GradientBucketBytes caps the buckets in which a GPU rank reduces
	// its gradients; 0: 1 MiB for the first, 25 MiB for the others (as
	// PyTorch DDP's bucket_cap_mb).
	GradientBucketBytes int
	// LossScale scales the loss's gradient for reduced-precision
	// training (see LossScale); the zero value does what the train net's
	// global_grad_scale fields ask (NVCaffe's), which is nothing unless
	// they are set.
	LossScale LossScale
}

// Solver trains a net.
type Solver[T blob.Float] struct {
	param    *caffepb.SolverParameter
	typ      string
	ctx      *device.Context
	log      *slog.Logger        // nil: slog.Default()
	text     protoio.TextOptions // how the net prototxts are read
	net      *net.Net[T]
	testNets []*net.Net[T]

	iter, currentStep int
	losses            []T
	smoothedLoss      T
	history           []*blob.Blob[T]   // rule.Histories() runs of one blob per learnable param
	paramHistory      [][]*blob.Blob[T] // each learnable param's history blobs, as its ParamUpdate shows them
	update, temp      []*blob.Blob[T]   // scratch, one per learnable param
	seed              uint64
	seeded            bool

	action func() Action
	// snapshotPending is a snapshot asked for between the passes of an
	// iteration, written at its end; snapshotIter and snapshotState are the
	// iteration (-1: none) and the state file of the last snapshot
	// written, so that a stop does not write the same one twice.
	snapshotPending bool
	snapshotIter    int
	snapshotState   string

	hooks     []func(*Solver[T]) error     // OnGradientsReady's, in order
	starts    []func(*Solver[T]) error     // OnStart's, in order
	comm      parallel.Comm                // nil: a job of one
	grads     *parallel.Gradients[T]       // host ranks' all-reduce
	buckets   *parallel.GradientBuckets[T] // GPU ranks' all-reduce, overlapped with backward
	agree     *parallel.Agree
	earlyExit bool
	rule      Rule[T]       // the solver type's update rule (registry.go)
	policy    Policy        // the learning rate policy (lr.go)
	updater   updater[T]    // prepares the gradients for the rule on the solver's device (update.go)
	lossScale lossScaler[T] // loss scaling (lossscale.go)
	noGraphs  bool          // Options.NoCUDAGraphs
	noAhead   bool          // Options.NoHostAhead
	agreed    uint          // a GPU rank's agreed requests read with replays' results, not yet acted on
	noOverlap bool          // Options.NoGradientOverlap
	bucketCap int           // Options.GradientBucketBytes
	graphs    iterationGraph[T]
}

// NewFromFile reads a solver prototxt and builds the solver.
func NewFromFile[T blob.Float](path string, opts Options) (*Solver[T], error) {
	p := &caffepb.SolverParameter{}
	if err := (protoio.TextOptions{SkipUnknownFields: opts.SkipUnknownFields, Logger: opts.Logger}).ReadFile(path, p); err != nil {
		return nil, err
	}
	opts.SolverFile = path
	s, err := New[T](p, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// New builds a solver: its train net and test nets (with the weights listed
// in the parameter's weights field), and the history its update rule needs.
func New[T blob.Float](p *caffepb.SolverParameter, opts Options) (*Solver[T], error) {
	p = proto.Clone(p).(*caffepb.SolverParameter)
	s := &Solver[T]{param: p, ctx: opts.Context, log: opts.Logger, action: func() Action { return None }, snapshotIter: -1,
		text: protoio.TextOptions{SkipUnknownFields: opts.SkipUnknownFields}, noGraphs: opts.NoCUDAGraphs, noAhead: opts.NoHostAhead, noOverlap: opts.NoGradientOverlap, bucketCap: opts.GradientBucketBytes}
	if err := s.joinJob(opts.Comm); err != nil {
		return nil, err
	}
	var err error
	s.typ = solverType(p)
	if s.rule, err = newRule[T](s.typ, p, s.ctx); err != nil {
		return nil, err
	}
	if err := checkRegularization(p); err != nil {
		return nil, err
	}
	if s.policy, err = policyOf(p); err != nil {
		return nil, err
	}
	if p.GetAverageLoss() < 1 || p.GetIterSize() < 1 {
		return nil, fmt.Errorf("average_loss (%d) and iter_size (%d) must be at least 1", p.GetAverageLoss(), p.GetIterSize())
	}
	if err := checkCounts(p); err != nil {
		return nil, err
	}
	if err := s.setSnapshotPrefix(opts.SolverFile); err != nil {
		return nil, err
	}
	if p.GetRandomSeed() >= 0 {
		s.seed, s.seeded = uint64(p.GetRandomSeed()), true
	} else {
		s.seed = uint64(time.Now().UnixNano())
	}
	if s.comm != nil {
		// Each rank draws its own random numbers (dropout masks, DummyData,
		// random crops), as each of Caffe's solver threads seeds itself
		// anew; rank 0 keeps the solver's seed. The weights are rank 0's,
		// broadcast, whatever the fillers draw elsewhere.
		s.seed += uint64(s.comm.Rank()) * 0x9e3779b97f4a7c15
	}
	logf.Debugf(s.log, "Initializing solver from parameters: %s", prototext.MarshalOptions{}.Format(p))
	if err := s.initTrainNet(opts); err != nil {
		return nil, err
	}
	if s.Root() {
		if err := s.initTestNets(opts); err != nil {
			return nil, err
		}
	}
	if err := s.joinGradients(); err != nil {
		return nil, err
	}
	if err := s.initLossScale(opts.LossScale); err != nil {
		return nil, err
	}
	if s.updater, err = newUpdater(s); err != nil {
		return nil, err
	}
	if err := s.initHistory(); err != nil {
		return nil, err
	}
	if err := s.checkSnapshotSize(); err != nil {
		return nil, err
	}
	logf.Debugf(s.log, "Solver scaffolding done.")
	return s, nil
}

// requestBits is the number of request bits a job's ranks agree on.
const requestBits = 2

// joinGradients sets up the averaging of a job's gradients over its
// ranks, so that every rank's gradients become their mean before anything
// else looks at them. GPU ranks reduce them in buckets while the backward
// pass runs (parallel.GradientBuckets), and agree on requests with the
// last bucket; with iter_size above 1, whose gradients are complete only
// after the last pass, all buckets then. Host ranks reduce them all after
// the passes (parallel.Gradients) and agree apart (parallel.Agree).
func (s *Solver[T]) joinGradients() error {
	if s.comm == nil {
		return nil
	}
	b, err := parallel.NewGradientBuckets(s.comm, s.net.LearnableParams(), s.net.LearnableParamsDoneAfter(), requestBits, s.bucketCap)
	if err != nil {
		return err
	}
	if b != nil {
		s.buckets = b
		if s.Root() {
			logf.Infof(s.log, "Gradients all-reduced in %v", b)
		}
		if !s.overlapped() {
			s.OnGradientsReady(func(*Solver[T]) error { return s.buckets.ReduceAll() })
		}
		return nil
	}
	s.grads = parallel.NewGradients(s.comm, s.net.LearnableParams())
	s.agree = parallel.NewAgree(s.comm, requestBits)
	s.OnGradientsReady(func(*Solver[T]) error { return s.grads.Reduce() })
	return nil
}

// GradientBuckets returns the bucketed all-reduce of a GPU rank's
// gradients, nil for a solver that is not one.
func (s *Solver[T]) GradientBuckets() *parallel.GradientBuckets[T] { return s.buckets }

// overlapped reports whether the passes reduce the gradients as their
// backward passes go (GradientBuckets with iter_size 1, unless
// Options.NoGradientOverlap).
func (s *Solver[T]) overlapped() bool {
	return s.buckets != nil && !s.noOverlap && s.param.GetIterSize() == 1
}

// beginReduction starts a pass that reduces the gradients as it goes:
// the net tells the buckets of each layer done.
func (s *Solver[T]) beginReduction() error {
	if !s.overlapped() {
		return nil
	}
	s.net.SetAfterBackward(s.buckets.LayerDone)
	return s.buckets.Begin()
}

// finishReduction ends such a pass: the compute stream waits for every
// bucket.
func (s *Solver[T]) finishReduction() error {
	if !s.overlapped() {
		return nil
	}
	s.net.SetAfterBackward(nil)
	return s.buckets.Finish()
}

// joinReduction joins the side work a reducing pass left running past
// its end (the agreed requests' device copy) into the compute stream.
func (s *Solver[T]) joinReduction() error {
	if s.buckets == nil {
		return nil
	}
	return s.buckets.Join()
}

// joinJob makes the solver a rank of comm's job (a job of one rank runs
// the same code, its collectives copying nothing).
func (s *Solver[T]) joinJob(comm parallel.Comm) error {
	if comm == nil {
		return nil
	}
	if s.ctx.Device() != comm.Device() {
		return fmt.Errorf("solver: the context runs on %v but the communicator (%v) on another device", s.ctx, comm)
	}
	if s.ctx == nil {
		s.ctx = device.New(nil)
	}
	s.ctx.SetShard(comm.Rank(), comm.Size())
	s.comm = comm
	return nil
}

// Root reports whether the solver is rank 0 of its job (or alone), the
// rank that tests, displays and snapshots.
func (s *Solver[T]) Root() bool { return s.comm == nil || s.comm.Rank() == 0 }

// Comm returns the solver's communicator, nil for a job of one.
func (s *Solver[T]) Comm() parallel.Comm { return s.comm }

// netSeed is the seed of net i's layers (0 train, 1.. test).
func (s *Solver[T]) netSeed(i int) int64 { return int64((s.seed + uint64(i)*0x9e3779b97f4a7c15) >> 1) }

// trainNetParam picks the train net from the one of net, net_param,
// train_net and train_net_param that is given.
func (s *Solver[T]) trainNetParam() (*caffepb.NetParameter, error) {
	p := s.param
	given := 0
	for _, set := range []bool{p.Net != nil, p.NetParam != nil, p.TrainNet != nil, p.TrainNetParam != nil} {
		if set {
			given++
		}
	}
	if given != 1 {
		return nil, fmt.Errorf("SolverParameter must specify exactly one train net using one of these fields: net, net_param, train_net, train_net_param (%d given)", given)
	}
	switch {
	case p.TrainNetParam != nil:
		return proto.Clone(p.TrainNetParam).(*caffepb.NetParameter), nil
	case p.TrainNet != nil:
		return netproto.ReadNetParamsFromTextFileWith(p.GetTrainNet(), s.text, s.log)
	case p.NetParam != nil:
		return proto.Clone(p.NetParam).(*caffepb.NetParameter), nil
	}
	return netproto.ReadNetParamsFromTextFileWith(p.GetNet(), s.text, s.log)
}

// netState merges the solver's default phase, the net's own state and the
// solver's state for the net, lowest precedence first (Caffe's rule), plus
// the command line's stages and level.
func netState(phase caffepb.Phase, own, override *caffepb.NetState, opts Options) *caffepb.NetState {
	st := &caffepb.NetState{Phase: phase.Enum()}
	proto.Merge(st, own)
	if override != nil {
		proto.Merge(st, override)
	}
	st.Stage = append(st.Stage, opts.Stages...)
	if opts.Level != 0 {
		st.Level = proto.Int32(opts.Level)
	}
	return st
}

func (s *Solver[T]) initTrainNet(opts Options) error {
	np, err := s.trainNetParam()
	if err != nil {
		return err
	}
	np.State = netState(caffepb.Phase_TRAIN, np.GetState(), s.param.TrainState, opts)
	logf.Debugf(s.log, "Creating training net")
	if s.net, err = net.New[T](np, net.Options{Context: s.ctx, Seed: s.netSeed(0), Logger: s.log, NoMemoryReuse: opts.NoMemoryReuse, Precision: opts.Precision, OwnPrecision: opts.OwnPrecision}); err != nil {
		return fmt.Errorf("train net: %w", err)
	}
	for _, w := range s.param.Weights {
		if err := s.LoadWeights(w); err != nil {
			return err
		}
	}
	return nil
}

// LoadWeights copies trained weights into the train net (the test nets
// share them): a comma-separated list of .caffemodel files, applied in
// order.
func (s *Solver[T]) LoadWeights(files string) error {
	for _, f := range strings.Split(files, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		logf.Infof(s.log, "Finetuning from %s", f)
		if err := s.net.CopyTrainedLayersFromFile(f); err != nil {
			return err
		}
	}
	return nil
}

// initTestNets builds the test nets: test_net_param, test_net, then as many
// instances of net/net_param as test_iter has entries left.
func (s *Solver[T]) initTestNets(opts Options) error {
	p := s.param
	generic := 0
	if p.Net != nil {
		generic++
	}
	if p.NetParam != nil {
		generic++
	}
	specific := len(p.TestNetParam) + len(p.TestNet)
	switch {
	case generic > 1:
		return errors.New("both net_param and net may not be specified")
	case generic == 0 && len(p.TestIter) != specific:
		return fmt.Errorf("test_iter must be specified for each test network: %d test_iter for %d test nets", len(p.TestIter), specific)
	case generic == 1 && len(p.TestIter) < specific:
		return fmt.Errorf("test_iter must be specified for each test network: %d test_iter for at least %d test nets", len(p.TestIter), specific)
	}
	total := len(p.TestIter)
	if generic == 0 {
		total = specific
	}
	if len(p.TestState) > 0 && len(p.TestState) != total {
		return fmt.Errorf("test_state must be unspecified or specified once per test net: %d test_state for %d test nets", len(p.TestState), total)
	}
	if total > 0 && p.GetTestInterval() <= 0 {
		return fmt.Errorf("test nets need a positive test_interval, got %d", p.GetTestInterval())
	}
	var params []*caffepb.NetParameter
	for _, tp := range p.TestNetParam {
		params = append(params, proto.Clone(tp).(*caffepb.NetParameter))
	}
	for _, f := range p.TestNet {
		np, err := netproto.ReadNetParamsFromTextFileWith(f, s.text, s.log)
		if err != nil {
			return err
		}
		params = append(params, np)
	}
	for len(params) < total {
		np, err := s.trainNetParamGeneric()
		if err != nil {
			return err
		}
		params = append(params, np)
	}
	for i, np := range params {
		var override *caffepb.NetState
		if len(p.TestState) > 0 {
			override = p.TestState[i]
		}
		np.State = netState(caffepb.Phase_TEST, np.GetState(), override, opts)
		logf.Debugf(s.log, "Creating test net (#%d)", i)
		tn, err := net.New[T](np, net.Options{Context: s.ctx, Seed: s.netSeed(i + 1), Logger: s.log, ForwardOnly: true, NoMemoryReuse: opts.NoMemoryReuse, Precision: opts.Precision, OwnPrecision: opts.OwnPrecision})
		if err != nil {
			return fmt.Errorf("test net #%d: %w", i, err)
		}
		s.testNets = append(s.testNets, tn)
		if opts.ShareTestMemory {
			lent, err := tn.BorrowActivations(s.net)
			if err != nil {
				return fmt.Errorf("test net #%d: %w", i, err)
			}
			logf.Infof(s.log, "Test net (#%d) computes in %.1f MiB of the train net's activation memory", i, float64(lent)/(1<<20))
		}
	}
	return nil
}

// trainNetParamGeneric returns the net/net_param net for a test instance.
func (s *Solver[T]) trainNetParamGeneric() (*caffepb.NetParameter, error) {
	if s.param.NetParam != nil {
		return proto.Clone(s.param.NetParam).(*caffepb.NetParameter), nil
	}
	return netproto.ReadNetParamsFromTextFileWith(s.param.GetNet(), s.text, s.log)
}

// initHistory makes the history and scratch blobs, shaped like the params
// and on their device.
func (s *Solver[T]) initHistory() error {
	params := s.net.LearnableParams()
	newLike := func(p *blob.Blob[T]) (*blob.Blob[T], error) {
		b, err := blob.New[T](p.Shape()...)
		if err != nil {
			return nil, err
		}
		if d := s.ctx.Device(); d != nil {
			b.SetDevice(d)
		}
		return b, nil
	}
	s.paramHistory = make([][]*blob.Blob[T], len(params))
	for range s.rule.Histories() {
		for id, p := range params {
			h, err := newLike(p)
			if err != nil {
				return err
			}
			s.history = append(s.history, h)
			s.paramHistory[id] = append(s.paramHistory[id], h)
		}
	}
	for _, p := range params {
		u, err := newLike(p)
		if err != nil {
			return err
		}
		t, err := newLike(p)
		if err != nil {
			return err
		}
		s.update, s.temp = append(s.update, u), append(s.temp, t)
	}
	return nil
}

// setSnapshotPrefix checks the snapshot settings and completes an empty or
// directory prefix with the solver file's name (Caffe's
// UpgradeSnapshotPrefixProperty), then makes sure snapshots can be written.
func (s *Solver[T]) setSnapshotPrefix(solverFile string) error {
	p := s.param
	prefix := p.GetSnapshotPrefix()
	stem := strings.TrimSuffix(filepath.Base(solverFile), filepath.Ext(solverFile))
	if solverFile != "" {
		if prefix == "" {
			prefix = filepath.Join(filepath.Dir(solverFile), stem)
		} else if fi, err := os.Stat(prefix); strings.HasSuffix(prefix, "/") || (err == nil && fi.IsDir()) {
			prefix = filepath.Join(prefix, stem)
		}
		p.SnapshotPrefix = proto.String(prefix)
	}
	if p.GetSnapshot() <= 0 && !p.GetSnapshotAfterTrain() {
		return nil
	}
	if prefix == "" {
		return errors.New("snapshots are asked for (snapshot or snapshot_after_train) but snapshot_prefix is not set and there is no solver file to name them after")
	}
	if !s.Root() {
		return nil // only rank 0 snapshots, and checks (Caffe's root_solver)
	}
	probe := s.snapshotFilename(".tempfile")
	f, err := os.Create(probe)
	if err != nil {
		return fmt.Errorf("cannot write to snapshot prefix %q: make sure that the directory exists and is writeable: %w", prefix, err)
	}
	f.Close()
	return os.Remove(probe)
}

// OnGradientsReady adds f to the hooks the solver calls at every iteration
// between the computed gradients and the update: Caffe's
// on_gradients_ready. When the hooks run, the gradients of the iteration's
// iter_size forward-backward passes are summed in the diffs of the net's
// learnable parameters (Graph.LearnableParams); after them the update clips,
// normalises and regularises the diffs and the solver type's Rule turns
// them into the update. A hook may read and change the diffs (an all-reduce
// of data-parallel training averages them; with Options.Comm that
// averaging is the first hook). Hooks run in the order they were added; an
// error from one stops training with it. Calling the hooks allocates
// nothing, so a hook that allocates nothing keeps the iteration free of
// allocations. With loss scaling (Options.LossScale) the diffs the hooks
// see are the gradients times LossScale(), which the update divides out
// after them. Add hooks before Solve or Step.
func (s *Solver[T]) OnGradientsReady(f func(s *Solver[T]) error) { s.hooks = append(s.hooks, f) }

// OnStart adds f to the hooks the solver calls at the start of every
// iteration, after the test pass due at it and before its forward-backward
// passes: Caffe's on_start, which pycaffe's add_callback reaches. Hooks
// run in the order they were added; an error from one stops training with
// it. A hook may write blobs the passes read (a batch fed from a program),
// so an iteration with start hooks runs without a CUDA graph, whose replay
// would read the device copies it was recorded with.
func (s *Solver[T]) OnStart(f func(s *Solver[T]) error) { s.starts = append(s.starts, f) }

// ApplyUpdate applies one update from the gradients the train net's
// learnable parameters hold in their diffs, at the current iteration's
// learning rate: divide by the loss scale (see LossScale; the train net's
// Backward multiplies by it), clip, normalise, regularise, the solver
// type's rule and the weights' update, as an iteration of Step does after
// its passes and hooks; dynamic loss scaling may skip it. The iteration
// count stays (Caffe's Solver::ApplyUpdate, pycaffe's apply_update).
func (s *Solver[T]) ApplyUpdate() (err error) {
	defer device.Recover(&err)
	rate := s.policy.Rate(s.param, s.iter, &s.currentStep)
	return s.applyUpdate(rate)
}

// applyUpdate applies the update of the gradients in the parameters' diffs:
// divided by the loss scale first, and skipped when dynamic loss scaling
// finds they overflowed.
func (s *Solver[T]) applyUpdate(rate float64) error {
	apply, err := s.unscaleGradients()
	if err != nil || !apply {
		return err
	}
	return s.updater.apply(s, rate)
}

// SetActionFunc sets the function consulted once per iteration (and during
// tests) for a requested stop or snapshot.
func (s *Solver[T]) SetActionFunc(f func() Action) { s.action = f }

// Net returns the train net.
func (s *Solver[T]) Net() *net.Net[T] { return s.net }

// TestNets returns the test nets.
func (s *Solver[T]) TestNets() []*net.Net[T] { return s.testNets }

// Iter returns the number of updates applied so far.
func (s *Solver[T]) Iter() int { return s.iter }

// LastSnapshot returns the state file (.solverstate or .solverstate.h5)
// of the last snapshot this solver wrote, the one to resume from, or ""
// when it wrote none.
func (s *Solver[T]) LastSnapshot() string { return s.snapshotState }

// Param returns the solver's parameter (with its snapshot prefix completed).
func (s *Solver[T]) Param() *caffepb.SolverParameter { return s.param }

// Solve trains until max_iter, resuming from a .solverstate first if
// resumeFile is not empty, then snapshots (snapshot_after_train) and runs a
// final display and test pass (Caffe's Solver::Solve).
func (s *Solver[T]) Solve(resumeFile string) (err error) {
	defer device.Recover(&err)
	if s.Root() {
		// Once per job, as Caffe's root solver: the other ranks of a
		// data-parallel job (goroutines of this process) say nothing more.
		logf.Infof(s.log, "Solving %s", s.net.Name())
		logf.Infof(s.log, "Learning Rate Policy: %s", s.param.GetLrPolicy())
	}
	s.earlyExit = false
	if resumeFile != "" {
		logf.Infof(s.log, "Restoring previous solver status from %s", resumeFile)
		if err := s.Restore(resumeFile); err != nil {
			return err
		}
	}
	if s.comm != nil {
		if err := parallel.BroadcastData(s.comm, s.net.LearnableParams()); err != nil {
			return err
		}
	}
	startIter := s.iter
	if err := s.Step(int(s.param.GetMaxIter()) - s.iter); err != nil {
		return err
	}
	if s.Root() && s.param.GetSnapshotAfterTrain() && s.snapshotIter != s.iter && (s.param.GetSnapshot() == 0 || s.iter%int(s.param.GetSnapshot()) != 0) {
		if _, _, err := s.Snapshot(); err != nil {
			return err
		}
	}
	if s.earlyExit {
		logf.Infof(s.log, "Optimization stopped early.")
		return nil
	}
	if d := int(s.param.GetDisplay()); s.Root() && d > 0 && s.iter%d == 0 {
		s.reseed()
		loss, err := s.net.Forward()
		if err != nil {
			return err
		}
		s.updateSmoothedLoss(loss, s.iter, startIter)
		logf.Infof(s.log, "Iteration %d, loss = %s", s.iter, num(s.smoothedLoss))
	}
	if ti := int(s.param.GetTestInterval()); s.Root() && ti > 0 && s.iter%ti == 0 {
		if err := s.TestAll(); err != nil {
			return err
		}
	}
	logf.Infof(s.log, "Optimization Done.")
	return nil
}

// reseed gives every layer of the train net a seed derived from the
// solver's seed and the iteration, so that stochastic layers draw the same
// numbers at the same iteration whether or not the run was resumed.
func (s *Solver[T]) reseed() {
	s.net.Reseed(s.seed ^ uint64(s.iter)*0xbf58476d1ce4e5b9)
}

// beginPass prepares pass number pass of the iteration on the GPU, with
// or without a graph alike: the learning rate and the RNG salt (the pass's
// number over the run) go to the device, and the recorded layers get the
// same seed every pass, as a replay repeats its recorded keys; the salt
// is what makes each pass draw new numbers.
func (s *Solver[T]) beginPass(rate float64, pass int) error {
	if !s.graphs.salted() {
		return nil
	}
	salt := uint64(s.iter)*uint64(s.param.GetIterSize()) + uint64(pass)
	if err := s.graphs.storeScalars(rate, salt); err != nil {
		return err
	}
	s.net.ReseedFrom(s.graphs.start, s.seed)
	return nil
}

// Step runs iters iterations: test when due, forward-backward iter_size
// times, display, update, snapshot when due, and obey requested actions
// (Caffe's Solver::Step). A loss that is NaN or infinite stops training
// with an error naming the iteration, and nothing is snapshotted. On the
// GPU an iteration may be replayed from a CUDA graph (Options.NoCUDAGraphs).
func (s *Solver[T]) Step(iters int) (err error) {
	defer device.Recover(&err)
	start, stop := s.iter, s.iter+iters
	s.losses, s.smoothedLoss = s.losses[:0], 0
	timer, lastIter := time.Now(), s.iter
	s.graphs.takeOpen() // one a failed Step left running: its iteration failed
	for s.iter < stop {
		if ti := int(s.param.GetTestInterval()); s.Root() && ti > 0 && s.iter%ti == 0 && (s.iter > 0 || s.param.GetTestInitialization()) {
			if err := s.TestAll(); err != nil {
				return err
			}
			// Alone, stop at once; in a job, the other ranks hear of the
			// stop at the end of this iteration.
			if s.earlyExit && s.comm == nil {
				break
			}
		}
		for _, h := range s.starts {
			if err := h(s); err != nil {
				return fmt.Errorf("iteration %d: %w", s.iter, err)
			}
		}
		display := s.Root() && s.param.GetDisplay() > 0 && s.iter%int(s.param.GetDisplay()) == 0
		rate := s.policy.Rate(s.param, s.iter, &s.currentStep)
		if s.buckets != nil {
			// The request travels with the gradients (agreeOn).
			if err := s.buckets.SetRequest(s.localRequest(s.action())); err != nil {
				return fmt.Errorf("iteration %d: %w", s.iter, err)
			}
		}
		prev := s.graphs.takeOpen() // the replay the iteration before left running
		it, err := s.iterate(rate, s.mayRunAhead(stop))
		if errors.Is(err, errStopBetweenPasses) {
			return s.stopBetweenPasses()
		}
		if err != nil {
			return fmt.Errorf("iteration %d: %w", s.iter, err)
		}
		// Its results are read now that this iteration's replay is
		// queued.
		if err := s.collectReplay(prev, start); err != nil {
			return err
		}
		if !it.ahead {
			if err := s.finishIteration(it, rate, start, display, &timer, &lastIter); err != nil {
				return err
			}
		}
		s.iter++
		request, err := s.agreeOn(it.agreed)
		if err != nil {
			return fmt.Errorf("iteration %d: %w", s.iter, err)
		}
		snapshot := s.Root() && ((s.param.GetSnapshot() > 0 && s.iter%int(s.param.GetSnapshot()) == 0) || request&requestSnapshot != 0)
		if snapshot || request&requestStop != 0 {
			// What follows reads this iteration's results.
			if err := s.collectReplay(s.graphs.takeOpen(), start); err != nil {
				return err
			}
		}
		if snapshot {
			if _, _, err := s.Snapshot(); err != nil {
				return err
			}
		}
		if request&requestStop != 0 {
			s.earlyExit = true
			break
		}
	}
	return nil
}

// finishIteration does what follows an iteration's passes whose loss is
// known: the NaN check, the OnGradientsReady hooks and the update unless
// the graph applied it, the smoothed loss and the display.
func (s *Solver[T]) finishIteration(it iteration[T], rate float64, start int, display bool, timer *time.Time, lastIter *int) error {
	if err := s.checkLoss(it.loss, s.iter); err != nil {
		return err
	}
	if !it.updated {
		for _, h := range s.hooks {
			if err := h(s); err != nil {
				return fmt.Errorf("iteration %d: %w", s.iter, err)
			}
		}
	}
	s.updateSmoothedLoss(it.loss, s.iter, start)
	if display {
		lapse := time.Since(*timer).Seconds()
		perSec := float64(s.iter-*lastIter) / max(lapse, 1e-9)
		logf.Infof(s.log, "Iteration %d (%s iter/s, %ss/%d iters), loss = %s", s.iter, num(perSec), num(lapse), s.param.GetDisplay(), num(s.smoothedLoss))
		*timer, *lastIter = time.Now(), s.iter
		s.logOutputs(s.net, "Train")
		if s.lossScale.cfg.Mode == LossScaleOff {
			logf.Infof(s.log, "Iteration %d, lr = %s", s.iter, num(rate))
		} else {
			// As NVCaffe's "gs = ", after the rate that log parsers read.
			logf.Infof(s.log, "Iteration %d, lr = %s, loss scale = %s", s.iter, num(rate), num(s.lossScale.scale))
		}
	}
	if !it.updated {
		if err := s.applyUpdate(rate); err != nil {
			return fmt.Errorf("iteration %d: %w", s.iter, err)
		}
	}
	return nil
}

// checkLoss stops training on a loss that is NaN or infinite.
func (s *Solver[T]) checkLoss(loss T, iter int) error {
	if math.IsNaN(float64(loss)) || math.IsInf(float64(loss), 0) {
		return fmt.Errorf("iteration %d: loss is %v; stopping (no snapshot written): lower base_lr or check the data", iter, loss)
	}
	return nil
}

// mayRunAhead reports whether the host may leave the current iteration's
// replay running and prepare the next before reading its results: on the
// GPU, unless Options.NoHostAhead, where nothing reads them in between
// (this iteration displays nothing, the next is no test's and no
// snapshot's, and Step does not end). The conditions are the same on
// every rank of a job (rank 0 alone tests and displays, but every rank
// decides as if it did), so that all read their agreed requests at the
// same iteration.
func (s *Solver[T]) mayRunAhead(stop int) bool {
	next := s.iter + 1
	due := func(every int32, i int) bool { return every > 0 && i%int(every) == 0 }
	return s.ctx.OnGPU() && !s.noAhead && next < stop && !due(s.param.GetDisplay(), s.iter) &&
		!due(s.param.GetTestInterval(), next) && !due(s.param.GetSnapshot(), next)
}

// collectReplay reads the results of a replay the host left running, if
// r is one: the loss, checked and added to the smoothed loss (a NaN
// stops training one iteration later than without running ahead, the
// error naming its iteration), and a GPU rank's agreed requests.
func (s *Solver[T]) collectReplay(r openReplay, start int) error {
	if !r.ok {
		return nil
	}
	loss, err := s.graphs.collect(s, r)
	if err != nil {
		return fmt.Errorf("iteration %d: %w", r.iter, err)
	}
	if err := s.checkLoss(loss, r.iter); err != nil {
		return err
	}
	s.updateSmoothedLoss(loss, r.iter, start)
	return nil
}

// iteration is what iterate reports of an iteration's passes.
type iteration[T blob.Float] struct {
	loss    T    // the mean loss over iter_size passes, unless ahead
	updated bool // the graph applied the update
	ahead   bool // the replay runs on, its results unread (collectReplay)
	agreed  bool // a GPU rank's agreed requests were or will be read with the replay's results
}

// iterate runs an iteration's passes, through the CUDA graph where it can,
// leaving the replay running where ahead allows (mayRunAhead).
func (s *Solver[T]) iterate(rate float64, ahead bool) (iteration[T], error) {
	viaGraph := false
	var err error
	if len(s.starts) == 0 && s.graphs.prepare(s, s.noGraphs) {
		if viaGraph, err = s.graphs.begin(s); err != nil {
			return iteration[T]{}, err
		}
	}
	s.reseed()
	if viaGraph {
		return s.graphs.iterate(s, rate, ahead)
	}
	s.graphs.countEager()
	if err := s.clearParamDiffs(); err != nil {
		return iteration[T]{}, err
	}
	loss, err := s.runPasses(rate, 0, 0)
	return iteration[T]{loss: loss / T(s.param.GetIterSize())}, err
}

// runPasses runs passes from to iter_size-1 of the iteration's forward
// and backward passes, the first from layer start (the layers before it
// have run), and returns the sum of their losses.
func (s *Solver[T]) runPasses(rate float64, from, start int) (T, error) {
	var loss T
	for pass := from; pass < int(s.param.GetIterSize()); pass++ {
		if pass > from {
			if err := s.checkBetweenPasses(); err != nil {
				return 0, err
			}
		}
		if err := s.beginPass(rate, pass); err != nil {
			return 0, err
		}
		if err := s.beginReduction(); err != nil {
			return 0, err
		}
		var l T
		var err error
		if start == 0 {
			l, err = s.net.ForwardBackward()
		} else {
			last := s.graphs.last
			if l, err = s.net.ForwardFromTo(start, last); err == nil {
				err = s.net.BackwardFromTo(last, start)
			}
			start = 0
		}
		if err == nil {
			err = s.finishReduction()
		}
		if err != nil {
			s.net.SetAfterBackward(nil)
			return 0, err
		}
		loss += l
	}
	return loss, nil
}

// errStopBetweenPasses ends an iteration whose stop was asked for between
// its iter_size passes.
var errStopBetweenPasses = errors.New("solver: stop requested between passes")

// checkBetweenPasses serves a request made during an iteration of several
// iter_size passes, which can take hours with a large iter_size: a stop
// ends the iteration unfinished (errStopBetweenPasses) rather than after
// all its passes; a snapshot waits for the iteration's end, whose weights
// it should hold. A job's ranks run every pass together and reduce the
// gradients at the end, so they only agree on requests there.
func (s *Solver[T]) checkBetweenPasses() error {
	if s.comm != nil {
		return nil
	}
	switch s.action() {
	case Stop:
		return errStopBetweenPasses
	case Snapshot:
		s.snapshotPending = true
	}
	return nil
}

// stopBetweenPasses ends training in the middle of an iteration: its
// gradients so far are dropped and no update is applied, so the weights,
// and a snapshot of them, are those after the iteration before, and a run
// resumed from that snapshot repeats the unfinished iteration whole.
func (s *Solver[T]) stopBetweenPasses() error {
	logf.Infof(s.log, "Iteration %d: stop requested between its iter_size passes; the iteration is dropped unfinished", s.iter)
	s.earlyExit = true
	if s.snapshotPending && s.Root() {
		s.snapshotPending = false
		if _, _, err := s.Snapshot(); err != nil {
			return err
		}
	}
	return nil
}

// The requests of the ranks of a job, as bits for parallel.Agree.
const (
	requestStop = 1 << iota
	requestSnapshot
)

// agreeOn returns the requests of the whole job at the end of an
// iteration: this rank's requested action (and a stop asked for while
// testing) and those of the other ranks, so that every rank stops at the
// same iteration and rank 0 snapshots when any rank asks (signals reach
// every rank of an mpirun job, not always at the same iteration). GPU
// ranks agreed with the gradients' last bucket on the requests made
// before the iteration's passes (a request made during the passes is
// served an iteration later), which costs no collective and no wait of
// its own; other ranks ask for the action now and agree apart. read says
// that the iteration's replay reads its agreed requests with its results
// (Options.NoHostAhead's way) or will (left running ahead): an iteration
// left running acts on those of the iteration before it, read while it
// ran, so that a GPU rank serves a request made during the passes two
// iterations later, and every rank at the same one.
func (s *Solver[T]) agreeOn(read bool) (uint, error) {
	if s.buckets != nil {
		if !read {
			// Passes run as written, or reduced after them: the
			// requests lie in the buckets' buffer now.
			err := s.buckets.Join()
			slot := 0
			if err == nil {
				slot, err = s.buckets.QueueAgreed()
			}
			if err == nil {
				err = s.ctx.Stream().Synchronize()
			}
			if cerr := s.buckets.Check(); cerr != nil {
				// An aborted all-reduce leaves the bits undefined.
				return 0, errors.Join(cerr, err)
			}
			if err != nil {
				return 0, err
			}
			s.agreed |= s.buckets.Agreed(slot)
		}
		bits := s.agreed
		s.agreed = 0
		return bits, nil
	}
	bits := s.localRequest(s.action())
	if s.agree == nil {
		return bits, nil
	}
	return s.agree.Union(bits)
}

// localRequest returns this rank's request bits: action a, a stop asked
// for while testing, a snapshot asked for between iter_size passes.
func (s *Solver[T]) localRequest(a Action) uint {
	var bits uint
	switch a {
	case Stop:
		bits = requestStop
	case Snapshot:
		bits = requestSnapshot
	}
	if s.earlyExit {
		bits |= requestStop
	}
	if s.snapshotPending {
		bits |= requestSnapshot
		s.snapshotPending = false
	}
	return bits
}

// updateSmoothedLoss keeps the mean of the last average_loss losses.
func (s *Solver[T]) updateSmoothedLoss(loss T, iter, start int) {
	avg := int(s.param.GetAverageLoss())
	if len(s.losses) < avg {
		s.losses = append(s.losses, loss)
		n := T(len(s.losses))
		s.smoothedLoss = (s.smoothedLoss*(n-1) + loss) / n
		return
	}
	i := (iter - start) % avg
	s.smoothedLoss += (loss - s.losses[i]) / T(avg)
	s.losses[i] = loss
}

// logOutputs logs a net's output blobs, element by element, as Caffe's
// "Train net output #k" lines.
func (s *Solver[T]) logOutputs(n *net.Net[T], kind string) {
	k := 0
	for out := range n.Graph().Outputs() {
		for _, v := range out.Blob().CPUData() {
			s.logOutput(kind, k, out.Name(), v, out.LossWeight())
			k++
		}
	}
}

func (s *Solver[T]) logOutput(kind string, k int, name string, v, w T) {
	msg := ""
	if w != 0 {
		msg = fmt.Sprintf(" (* %s = %s loss)", num(w), num(w*v))
	}
	logf.Infof(s.log, "    %s net output #%d: %s = %s%s", kind, k, name, num(v), msg)
}

// num formats a number as C++ streams do by default (6 significant digits).
func num[F float32 | float64](v F) string { return fmt.Sprintf("%.6g", float64(v)) }

// clearParamDiffs zeroes the gradients of the net's parameters: through
// the updater where it can do so in one launch (fusedSGD), else with the
// net's ClearParamDiffs.
func (s *Solver[T]) clearParamDiffs() error {
	if c, ok := s.updater.(interface {
		clearDiffs(*Solver[T]) (bool, error)
	}); ok {
		if done, err := c.clearDiffs(s); err != nil || done {
			return err
		}
	}
	return s.net.ClearParamDiffs()
}

// clipGradients scales all gradients down when their joint L2 norm exceeds
// clip_gradients.
func (s *Solver[T]) clipGradients() {
	clip := float64(s.param.GetClipGradients())
	if clip < 0 {
		return
	}
	var sumsq float64
	for p := range s.net.Graph().LearnableParams() {
		sumsq += float64(p.Blob().SumsqDiff())
	}
	norm := math.Sqrt(sumsq)
	if norm <= clip {
		return
	}
	factor := clip / norm
	logf.Infof(s.log, "Gradient clipping: scaling down gradients (L2 norm %s > %s) by scale factor %s", num(norm), num(clip), num(factor))
	for p := range s.net.Graph().LearnableParams() {
		p.Blob().ScaleDiff(T(factor))
	}
}

// TestAll runs every test net.
func (s *Solver[T]) TestAll() error {
	for i := range s.testNets {
		if s.earlyExit {
			break
		}
		if err := s.Test(i); err != nil {
			return err
		}
	}
	return nil
}

// Test runs test net i for its test_iter iterations with the train net's
// weights and logs the mean of each output (Caffe's Solver::Test).
func (s *Solver[T]) Test(i int) error {
	logf.Infof(s.log, "Iteration %d, Testing net (#%d)", s.iter, i)
	tn := s.testNets[i]
	if err := tn.ShareTrainedLayersWith(s.net); err != nil {
		return err
	}
	iters := int(s.param.TestIter[i])
	if layer.NewTestEvaluation(s.param.GetEvalType()) != nil {
		return s.testEvaluated(i, tn, iters)
	}
	var scores []T
	var loss T
	for it := range iters {
		l, stop, err := s.testIteration(i, tn, it)
		if stop || err != nil {
			return err
		}
		loss += l
		k := 0
		for out := range tn.Graph().Outputs() {
			for _, v := range out.Blob().CPUData() {
				if it == 0 {
					scores = append(scores, v)
				} else {
					scores[k] += v
				}
				k++
			}
		}
	}
	if s.param.GetTestComputeLoss() {
		logf.Infof(s.log, "Test loss: %s", num(loss/T(iters)))
	}
	k := 0
	for out := range tn.Graph().Outputs() {
		for range out.Blob().Count() {
			s.logOutput("Test", k, out.Name(), scores[k]/T(iters), out.LossWeight())
			k++
		}
	}
	return nil
}

// testIteration runs test iteration it of test net i after serving the
// pending requests (a snapshot, or a stop, which ends the test: stop true).
func (s *Solver[T]) testIteration(i int, tn *net.Net[T], it int) (loss T, stop bool, err error) {
	for req := s.action(); req != None; req = s.action() {
		if req == Snapshot {
			if _, _, err := s.Snapshot(); err != nil {
				return 0, true, err
			}
		} else {
			s.earlyExit = true
		}
	}
	if s.earlyExit {
		logf.Infof(s.log, "Test interrupted.")
		return 0, true, nil
	}
	tn.Reseed(s.seed ^ uint64(it)*0x94d049bb133111eb)
	if loss, err = tn.Forward(); err != nil {
		return 0, true, fmt.Errorf("test net #%d, test iteration %d: %w", i, it, err)
	}
	return loss, false, nil
}

// testEvaluated is the test of an eval_type a package of layers
// registered (layer.RegisterEvalType), such as SSD's TestDetection
// (eval_type: "detection"): each output of the test net is gathered over
// the test iterations by an evaluation of the type and logged as its
// score (SSD's mean average precision, per ap_version).
func (s *Solver[T]) testEvaluated(i int, tn *net.Net[T], iters int) error {
	var evals []layer.TestEvaluation
	var loss T
	for it := range iters {
		l, stop, err := s.testIteration(i, tn, it)
		if stop || err != nil {
			return err
		}
		loss += l
		k := 0
		for out := range tn.Graph().Outputs() {
			b := out.Blob()
			if k == len(evals) {
				evals = append(evals, layer.NewTestEvaluation(s.param.GetEvalType()))
			}
			rows := make([]float32, b.Count())
			for j, v := range b.CPUData() {
				rows[j] = float32(v)
			}
			if err := evals[k].Add(b.Shape(), rows); err != nil {
				return fmt.Errorf("test net #%d: output %s: %w", i, out.Name(), err)
			}
			k++
		}
	}
	if s.param.GetTestComputeLoss() {
		logf.Infof(s.log, "Test loss: %s", num(loss/T(iters)))
	}
	k := 0
	for out := range tn.Graph().Outputs() {
		score, err := evals[k].Score(s.param)
		if err != nil {
			return err
		}
		logf.Infof(s.log, "    Test net output #%d: %s = %s", k, out.Name(), num(score))
		k++
	}
	return nil
}

// snapshotFilename is <prefix>_iter_<iter><ext>.
func (s *Solver[T]) snapshotFilename(ext string) string {
	return fmt.Sprintf("%s_iter_%d%s", s.param.GetSnapshotPrefix(), s.iter, ext)
}

// Snapshot writes the train net's weights (.caffemodel) and the solver's
// state (.solverstate) and returns their paths. Each file is written to a
// temporary file and renamed, so an interrupted snapshot never replaces a
// good one with a broken one.
func (s *Solver[T]) Snapshot() (model, state string, err error) {
	defer device.Recover(&err)
	if s.param.GetSnapshotFormat() == caffepb.SolverParameter_HDF5 {
		return s.snapshotHDF5()
	}
	model, state = s.snapshotFilename(".caffemodel"), s.snapshotFilename(".solverstate")
	compact := compactBlobs(s.param)
	weights := s.net.ToProto(s.param.GetSnapshotDiff())
	if compact {
		if weights, err = s.net.ToProtoRaw(s.param.GetSnapshotDiff()); err != nil {
			return "", "", err
		}
	}
	// Both files are checked before either is written, so that a snapshot
	// too large to read back writes nothing: the weights exactly, the state
	// by its history's numbers, nearly all of it (building it now would
	// hold both copies at once).
	_, history := s.snapshotSizes()
	if err := checkBinarySnapshot(model, state, int64(proto.Size(weights)), history); err != nil {
		return "", "", err
	}
	logf.Infof(s.log, "Snapshotting to binary proto file %s", model)
	if err := protoio.WriteProtoToBinaryFile(weights, model); err != nil {
		return "", "", err
	}
	st := &caffepb.SolverState{Iter: proto.Int32(int32(s.iter)), LearnedNet: proto.String(model), CurrentStep: proto.Int32(int32(s.currentStep))}
	for _, h := range s.history {
		if !compact {
			st.History = append(st.History, h.ToProto(false))
			continue
		}
		hp, err := h.ToProtoRaw(blob.RawType[T](), false)
		if err != nil {
			return "", "", err
		}
		st.History = append(st.History, hp)
	}
	logf.Infof(s.log, "Snapshotting solver state to binary proto file %s", state)
	if err := protoio.WriteProtoToBinaryFile(st, state); err != nil {
		return "", "", err
	}
	s.snapshotIter, s.snapshotState = s.iter, state
	return model, state, nil
}

// compactBlobs reports whether binary snapshots are written in NVCaffe's
// compact form (raw_data, Net.ToProtoRaw), the weights and the history
// alike: only when the solver sets store_blobs_in_old_format: false.
// NVCaffe writes that form when the field is unset too; gocaffe writes
// BVLC's float fields then, because a BVLC solver never sets the field and
// BVLC Caffe cannot read raw_data, while NVCaffe reads both.
func compactBlobs(p *caffepb.SolverParameter) bool {
	return p.StoreBlobsInOldFormat != nil && !p.GetStoreBlobsInOldFormat()
}

// Restore resumes from a .solverstate: the iteration, the learning rate
// step, the update history and (from the state's learned_net) the weights.
// A relative learned_net that does not exist from the working directory is
// also looked for next to the state file.
func (s *Solver[T]) Restore(path string) error {
	if strings.HasSuffix(path, ".h5") {
		return s.restoreHDF5(path)
	}
	st := &caffepb.SolverState{}
	if err := protoio.ReadProtoFromBinaryFile(path, st); err != nil {
		return err
	}
	if err := s.checkState(path, int(st.GetIter()), int(st.GetCurrentStep())); err != nil {
		return err
	}
	if len(st.History) != len(s.history) {
		return fmt.Errorf("%s: incorrect length of history blobs: %d, the %s solver of this net needs %d", path, len(st.History), s.typ, len(s.history))
	}
	for i, h := range st.History {
		if !s.history[i].ShapeEquals(h) {
			return fmt.Errorf("%s: history blob %d has shape %v, the net's parameter is %s", path, i, h.GetShape().GetDim(), s.history[i].ShapeString())
		}
	}
	if st.LearnedNet != nil {
		if err := s.loadLearnedNet(path, st.GetLearnedNet()); err != nil {
			return err
		}
	}
	for i, h := range st.History {
		if err := s.history[i].FromProto(h, false); err != nil {
			return fmt.Errorf("%s: history blob %d: %w", path, i, err)
		}
	}
	s.iter, s.currentStep = int(st.GetIter()), int(st.GetCurrentStep())
	return nil
}

// checkCounts checks the solver's counts that Caffe's loops take for
// granted: a negative one would never end, or index out of range.
func checkCounts(p *caffepb.SolverParameter) error {
	for i, n := range p.TestIter {
		if n < 1 {
			return fmt.Errorf("test_iter must be at least 1: test net #%d has test_iter %d", i, n)
		}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"max_iter", int64(p.GetMaxIter())}, {"display", int64(p.GetDisplay())}, {"snapshot", int64(p.GetSnapshot())},
		{"test_interval", int64(p.GetTestInterval())}, {"stepsize", int64(p.GetStepsize())}} {
		if f.v < 0 {
			return fmt.Errorf("%s must not be negative, got %d", f.name, f.v)
		}
	}
	return nil
}

// checkState checks a restored iteration and step: non-negative, and the
// step within the multistep policy's stepvalues.
func (s *Solver[T]) checkState(path string, iter, step int) error {
	if iter < 0 {
		return fmt.Errorf("%s: iter %d is negative", path, iter)
	}
	if step < 0 || (s.param.GetLrPolicy() == "multistep" && step > len(s.param.Stepvalue)) {
		return fmt.Errorf("%s: current_step %d is outside 0..%d (the solver's stepvalues)", path, step, len(s.param.Stepvalue))
	}
	return nil
}

// loadLearnedNet loads the weights a solver state names; a relative name
// that does not exist from the working directory is also looked for next
// to the state file.
func (s *Solver[T]) loadLearnedNet(statePath, model string) error {
	if _, err := os.Stat(model); err != nil && !filepath.IsAbs(model) {
		if alt := filepath.Join(filepath.Dir(statePath), filepath.Base(model)); fileExists(alt) {
			model = alt
		}
	}
	return s.net.CopyTrainedLayersFromFile(model)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Close closes the test nets and the train net (see net.Net.Close).
func (s *Solver[T]) Close() error {
	if s.agree != nil {
		s.agree.Close()
	}
	errs := []error{s.graphs.close(s), s.updater.close()}
	for _, tn := range s.testNets {
		errs = append(errs, tn.Close())
	}
	errs = append(errs, s.net.Close())
	if s.buckets != nil {
		// After the net: the diffs point into the buckets' memory.
		errs = append(errs, s.buckets.Close())
	}
	return errors.Join(errs...)
}
