package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// netFlags are the flags shared by the commands that build a net.
type netFlags struct {
	gpu         string
	tf32        bool
	precision   string
	determinism bool
	level       int32
	stages      string
	skipUnknown bool
	cpuProfile  string
}

func (f *netFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.gpu, "gpu", "", "run on these GPUs: a device number (0), a list (0,1) or 'all'; empty for the CPU")
	fs.BoolVar(&f.tf32, "tf32", false, "let float32 products (cuBLAS, cuDNN convolutions) use TF32 tensor cores on the GPU: faster, 10-bit mantissa; off, the default, keeps strict FP32")
	fs.StringVar(&f.precision, "precision", "", "what the GPU computes in: fp32 (strict), tf32 (as -tf32), fp16 or bf16 (mixed precision: activations and their gradients in 16 bits in the layers that have a 16-bit path, convolution, inner product, pooling, ReLU, Sigmoid, TanH, Dropout and LRN across channels, on tensor cores; weights, their updates, losses, softmax and BatchNorm in FP32); empty, the default, computes as the net's NVCaffe precision fields (forward_type FLOAT16) ask")
	fs.BoolVar(&f.determinism, "deterministic", false, "on the GPU, choose algorithms that give the same results bit for bit on every run (cuDNN's deterministic convolutions, by its heuristics, as Caffe) rather than the fastest found by timing them; runs repeat when the solver also sets random_seed")
	fs.Var(int32Flag{&f.level}, "level", "the level of the net state, for include/exclude rules")
	fs.StringVar(&f.stages, "stage", "", "comma-separated stages of the net state, for include/exclude rules")
	fs.BoolVar(&f.skipUnknown, "skip_unknown_fields", false, "skip, with a warning each, prototxt fields gocaffe does not know (a Caffe fork's) instead of failing")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof reads it): where the host's time goes, data layers' decoding included")
}

// int32Flag is a flag for a field Caffe keeps in an int32 (NetState.level,
// SolverParameter.max_iter): a value outside int32's range is refused when
// the flag is parsed rather than wrapped around (-iterations 4294967306
// would train 10 iterations).
type int32Flag struct{ p *int32 }

func (f int32Flag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*f.p), 10)
}

func (f int32Flag) Set(s string) error {
	v, err := strconv.ParseInt(s, 0, 32)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%s is outside %d..%d", s, math.MinInt32, math.MaxInt32)
		}
		return errors.New("not an integer")
	}
	*f.p = int32(v)
	return nil
}

// startProfile starts the CPU profile -cpuprofile asks for; the returned
// function stops it and closes the file (a no-op without the flag).
func (f *netFlags) startProfile() (stop func(), err error) {
	if f.cpuProfile == "" {
		return func() {}, nil
	}
	file, err := os.Create(f.cpuProfile)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(file); err != nil {
		file.Close()
		return nil, fmt.Errorf("-cpuprofile %s: %w", f.cpuProfile, err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := file.Close(); err != nil {
			glog.Warningf("-cpuprofile %s: %v", f.cpuProfile, err)
		}
	}, nil
}

func (f *netFlags) stageList() []string {
	var out []string
	for _, s := range strings.Split(f.stages, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// state returns the net state for a phase with the flags' level and stages.
func (f *netFlags) state(phase caffepb.Phase) *caffepb.NetState {
	st := &caffepb.NetState{Phase: phase.Enum(), Stage: f.stageList()}
	if f.level != 0 {
		lv := f.level
		st.Level = &lv
	}
	return st
}

// context resolves -gpu to the context of a device, or the host's for
// the CPU, with the run's settings. gocaffe trains on one GPU; a list of
// several is refused rather than silently using one.
func (f *netFlags) context() (*device.Context, error) {
	if f.gpu == "" {
		return hostContext(), nil
	}
	ids, err := parseGPUs(f.gpu, cuda.DeviceCount)
	if err != nil {
		return nil, err
	}
	if len(ids) != 1 {
		return nil, fmt.Errorf("-gpu %s: training on %d GPUs is not supported yet; give one device", f.gpu, len(ids))
	}
	ctx, err := f.open(ids[0])
	if err != nil {
		return nil, err
	}
	glog.Infof("Using GPU %d", ids[0])
	return ctx, nil
}

// solverContext is Caffe's rule for train: -gpu wins; otherwise a solver in
// GPU mode (the default) uses its device_id. A binary built without CUDA
// runs such a solver on the CPU, with a warning, rather than refusing the
// files of every Caffe user; an explicit -gpu still fails there.
func (f *netFlags) solverContext(p *caffepb.SolverParameter) (*device.Context, error) {
	if f.gpu != "" {
		return f.context()
	}
	if p.GetSolverMode() != caffepb.SolverParameter_GPU {
		glog.Infof("Use CPU.")
		return hostContext(), nil
	}
	id := solverDevice(p)
	ctx, err := f.open(id)
	if errors.Is(err, cuda.ErrNoCUDA) {
		glog.Warningf("solver_mode is GPU but gocaffe was built without CUDA support; training on the CPU")
		return hostContext(), nil
	}
	if err != nil {
		return nil, err
	}
	glog.Infof("Using GPU %d", id)
	return ctx, nil
}

// solverDevice is the solver's device_id: 0 when absent, as Caffe's
// default. TSN's solvers list one per GPU; gocaffe trains on the first and
// says how to use them all.
func solverDevice(p *caffepb.SolverParameter) int {
	ids := p.GetDeviceId()
	switch len(ids) {
	case 0:
		return 0
	case 1:
		return int(ids[0])
	}
	glog.Warningf("device_id lists %d GPUs %v (TSN's form); training on GPU %d: give -gpu %s for data-parallel training on all of them",
		len(ids), ids, ids[0], strings.Trim(strings.Join(strings.Fields(fmt.Sprint(ids)), ","), "[]"))
	return int(ids[0])
}

// open opens GPU id's context with the run's settings and the flags'
// (-tf32, -deterministic).
func (f *netFlags) open(id int) (*device.Context, error) {
	ctx, err := device.Open(id)
	if err != nil {
		return nil, err
	}
	ctx.SetSettings(config)
	ctx.SetDeterministic(f.determinism)
	if f.tf32 || f.precision == "tf32" {
		if err := ctx.SetTF32(true); err != nil {
			return nil, err
		}
	}
	return ctx, nil
}

// precisionOptions returns what -precision asks of the nets: a 16-bit
// type (StorageNative for none), and whether NVCaffe's precision fields
// are overridden (any value given); or an error for a value it does not
// know.
func (f *netFlags) precisionOptions() (syncedmem.Storage, bool, error) {
	switch strings.ToLower(f.precision) {
	case "":
		return syncedmem.StorageNative, false, nil
	case "fp32":
		if f.tf32 {
			return 0, false, errors.New("-precision fp32 asks for strict FP32, -tf32 for TF32 products: give one")
		}
		return syncedmem.StorageNative, true, nil
	case "tf32":
		return syncedmem.StorageNative, true, nil
	case "fp16":
		return syncedmem.StorageFloat16, true, nil
	case "bf16":
		return syncedmem.StorageBFloat16, true, nil
	}
	return 0, false, fmt.Errorf("-precision %s: want fp32, tf32, fp16 or bf16", f.precision)
}

// logMemoryPlan logs the memory a net's plan takes, with its five largest
// memories, before the first pass (net.MemoryReport), and refuses a plan
// the process cannot hold (net.CheckMemory).
func logMemoryPlan(n *net.Net[float32]) error {
	for _, line := range strings.Split(strings.TrimRight(n.MemoryReport().Format(5), "\n"), "\n") {
		glog.Infof("%s", line)
	}
	return n.CheckMemory()
}
