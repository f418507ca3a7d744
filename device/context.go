// Package device holds what gocaffe keeps per device: the Context that
// every layer, net and solver of that device receives, the View through
// which arithmetic written once runs on either device, and Recover, the
// bridge from a device failure inside a blob accessor back to an error.
//
// # Contexts
//
// A Context is one device's state: the *cuda.Device (none for the host),
// the math kernels of its GPU views, the kernels of the layers, and the
// limits that the layers' GPU halves size their workspaces by. A nil
// *Context is the host's, which is what a layer, net or solver given no
// context runs on. Make one Context per device and hand it to everything
// that runs there:
//
//	ctx, err := device.Open(0)       // GPU 0; nil ctx (or device.New(nil)) is the CPU
//	n, err := net.New[float32](p, net.Options{Context: ctx})
//	s, err := solver.New[float32](sp, solver.Options{Context: ctx})
//
// As the device's compute stream and cuBLAS handle it stands for, a
// Context is for one goroutine at a time (the data layers' prefetch
// goroutines use streams of their own, not the context's).
//
// The cuDNN handle and the multi-GPU communicator, when they come, belong
// here too: one per device, created on first use, bound to the compute
// stream.
//
// # Settings
//
// A Context carries the run-time settings (package settings) of what runs
// on it: the layers, nets and solvers given the context read their
// choices (BatchNorm's kernels, the convolutions' GEMM way, the CPU's
// GEMM, the JPEG decoder, ...) from it rather than from the environment,
// so two contexts of one program may run with different settings:
//
//	ctx := device.New(nil)
//	ctx.SetSettings(settings.Settings{GEMM: settings.GEMMOwn})
//
// A nil *Context has the defaults (the zero settings.Settings).
package device

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/settings"
)

// DefaultConvWorkspaceElems is the default bound on the batched GPU
// convolution's buffers, in elements: memory for speed, as the chunk of
// images grows GEMMs grow and launches shrink, but beyond a few hundred MB
// nothing is gained.
const DefaultConvWorkspaceElems = 1 << 26

// Context is the state of one device. The zero value is not usable; a nil
// *Context is the host's.
type Context struct {
	dev *cuda.Device

	convWorkspace int // elements; see SetConvWorkspaceElems

	rank, ranks int // the shard of a data-parallel job; see SetShard

	mathMu sync.Mutex
	math   *mathfn.Kernels // loaded by the first GPU view
	salt   cuda.DevicePtr  // the RNG salt (RNGSalt), 0 until asked for

	kernelMu sync.RWMutex
	kernels  map[kernelKey]*cuda.Function

	tf32 bool // TF32 tensor cores allowed for float32 products (SetTF32)

	deterministic bool // algorithms chosen for reproducible results (SetDeterministic)

	settings settings.Settings // see SetSettings

	// The workspace of the cuDNN engines: one buffer for all the layers of
	// the context, which run one after another on its stream (Workspace).
	wsMu    sync.Mutex
	ws      cuda.DevicePtr
	wsBytes int
	wsMoves int // times ws or a scratch buffer was replaced by a larger one (WorkspaceMoves)

	// The scratch buffers of layers computing in 16 bits (Scratch), under
	// wsMu: values converted at the edges of a pass.
	scratch      [scratchSlots]cuda.DevicePtr
	scratchBytes [scratchSlots]int
}

type kernelKey struct{ program, name string }

var errHostContext = errors.New("device: the host context has no GPU")

// New returns a new context for d, or a host context when d is nil.
func New(d *cuda.Device) *Context {
	return &Context{dev: d, convWorkspace: DefaultConvWorkspaceElems, ranks: 1, kernels: map[kernelKey]*cuda.Function{}}
}

// Open returns a new context for GPU ordinal. In a build without CUDA the
// error is cuda.ErrNoCUDA.
func Open(ordinal int) (*Context, error) {
	d, err := cuda.GetDevice(ordinal)
	if err != nil {
		return nil, err
	}
	return New(d), nil
}

// Device returns the context's GPU, nil for the host.
func (c *Context) Device() *cuda.Device {
	if c == nil {
		return nil
	}
	return c.dev
}

// OnGPU reports whether the context is a GPU's.
func (c *Context) OnGPU() bool { return c.Device() != nil }

// String names the context's device, as Caffe's log does: "GPU 0" or "CPU".
func (c *Context) String() string {
	if !c.OnGPU() {
		return "CPU"
	}
	return fmt.Sprintf("GPU %d", c.dev.Ordinal())
}

// Stream returns the device's compute stream, on which the layers' kernels
// and the math run; nil for the host.
func (c *Context) Stream() *cuda.Stream {
	if !c.OnGPU() {
		return nil
	}
	return c.dev.Stream()
}

// Synchronize waits until the work queued on the compute stream has
// finished; on the host there is none.
func (c *Context) Synchronize() error {
	if !c.OnGPU() {
		return nil
	}
	return c.dev.Stream().Synchronize()
}

// ConvWorkspaceElems returns the bound, in elements, on the buffers the
// batched GPU convolution sizes its chunks of images by.
func (c *Context) ConvWorkspaceElems() int {
	if c == nil {
		return DefaultConvWorkspaceElems
	}
	return c.convWorkspace
}

// SetConvWorkspaceElems sets the bound ConvWorkspaceElems returns (n >= 1);
// layers set up afterwards use it. Tests use a small one to force several
// chunks.
func (c *Context) SetConvWorkspaceElems(n int) { c.convWorkspace = max(n, 1) }

// mathKernels returns the math kernels of the context's device, loading
// them on first use. A failure is not kept: the next call tries again.
func (c *Context) mathKernels() (*mathfn.Kernels, error) {
	c.mathMu.Lock()
	defer c.mathMu.Unlock()
	if c.math == nil {
		k, err := mathfn.LoadKernels(c.dev)
		if err != nil {
			return nil, err
		}
		c.math = k
	}
	return c.math, nil
}

// Kernel returns kernel name of program for the context's device,
// compiling source(program) when the context first needs the program (the
// compiled module is cached further by the device and on disk; see
// cuda.Device.Compile). A package with kernels of its own (the layers)
// keeps them this way, per device, with no state of its own. source must
// give the same text for the same program every time.
func (c *Context) Kernel(program, name string, source func(program string) (string, error)) (*cuda.Function, error) {
	if !c.OnGPU() {
		return nil, errHostContext
	}
	key := kernelKey{program, name}
	c.kernelMu.RLock()
	f, ok := c.kernels[key]
	c.kernelMu.RUnlock()
	if ok {
		return f, nil
	}
	src, err := source(program)
	if err != nil {
		return nil, err
	}
	mod, err := c.dev.Compile(program, src)
	if err != nil {
		return nil, err
	}
	if f, err = mod.Function(name); err != nil {
		return nil, err
	}
	c.kernelMu.Lock()
	c.kernels[key] = f
	c.kernelMu.Unlock()
	return f, nil
}

// Shard returns which part of a data-parallel job runs on the context's
// device: rank of ranks (0 of 1 when the job has one rank, and for a nil
// context). Caffe keeps the same in its per-thread solver_rank and
// solver_count; its Data layer reads only the records of its rank.
func (c *Context) Shard() (rank, ranks int) {
	if c == nil || c.ranks < 1 {
		return 0, 1
	}
	return c.rank, c.ranks
}

// SetShard says the context's device runs rank of a job of ranks ranks.
// Set it before building nets on the context.
func (c *Context) SetShard(rank, ranks int) { c.rank, c.ranks = rank, ranks }

// SetTF32 allows (or, the default, forbids) TF32 tensor cores for float32
// products on the context's GPU: cuBLAS GEMMs and cuDNN convolutions set
// up afterwards. TF32 keeps float32's range with a 10-bit mantissa, about
// 8x the FP32 throughput of an H100; strict FP32 keeps results comparable
// with Caffe's.
func (c *Context) SetTF32(on bool) error {
	c.tf32 = on
	if !c.OnGPU() {
		return nil
	}
	b, err := c.dev.Blas()
	if err != nil {
		return err
	}
	return b.SetTF32(on)
}

// SetDeterministic makes the layers set up afterwards choose algorithms
// that give the same results bit for bit on every run (cuDNN's
// deterministic convolution algorithms, by its heuristics, as Caffe chose
// them) instead of the fastest ones found by timing them (the default,
// PyTorch's cudnn.benchmark), whose choice can change from run to run and
// whose atomic additions round in varying order. On the host it changes
// nothing: host layers are deterministic.
func (c *Context) SetDeterministic(on bool) { c.deterministic = on }

// Deterministic reports whether layers choose reproducible algorithms
// (SetDeterministic).
func (c *Context) Deterministic() bool { return c != nil && c.deterministic }

// TF32 reports whether TF32 tensor cores are allowed (SetTF32).
func (c *Context) TF32() bool { return c != nil && c.tf32 }

// Settings returns the settings of what runs on the context (SetSettings);
// a nil context's are the defaults.
func (c *Context) Settings() settings.Settings {
	if c == nil {
		return settings.Settings{}
	}
	return c.settings
}

// SetSettings gives the context s, for the layers, nets and solvers set
// up on it afterwards (a layer reads the settings it needs when it is set
// up, a data layer when it starts its prefetching). c must not be nil:
// device.New(nil) makes a host context that can carry settings.
func (c *Context) SetSettings(s settings.Settings) { c.settings = s }

// DNN returns the cuDNN handle of the context's GPU; the error wraps
// cuda.ErrNoCuDNN where cuDNN is not installed, or where the context's
// settings switch it off (CuDNN: settings.Off), which the layers take as
// a machine without it.
func (c *Context) DNN() (*cuda.DNN, error) {
	if !c.OnGPU() {
		return nil, errHostContext
	}
	if c.settings.CuDNN == settings.Off {
		return nil, fmt.Errorf("%w: switched off by the settings (GOCAFFE_CUDNN=off)", cuda.ErrNoCuDNN)
	}
	return c.dev.DNN()
}

// Workspace returns device memory of at least bytes for a cuDNN call: one
// buffer shared by the context's layers, grown as needed (after waiting
// for the work queued on the stream, which may still use the old one).
func (c *Context) Workspace(bytes int) (cuda.DevicePtr, error) {
	if !c.OnGPU() {
		return 0, errHostContext
	}
	c.wsMu.Lock()
	defer c.wsMu.Unlock()
	if bytes <= c.wsBytes {
		return c.ws, nil
	}
	if c.ws != 0 {
		if err := c.Synchronize(); err != nil {
			return 0, err
		}
		if err := c.dev.Free(c.ws); err != nil {
			return 0, err
		}
		c.ws, c.wsBytes = 0, 0
	}
	p, err := c.dev.Alloc(bytes)
	if err != nil {
		return 0, err
	}
	c.ws, c.wsBytes = p, bytes
	c.wsMoves++
	return p, nil
}

// ScratchBuffers is how many scratch buffers a context keeps (Scratch):
// what one pass of a layer needs at once (pooling's backward pass reads
// y, dy and x and writes dx).
const ScratchBuffers = 4

// ScratchWeights and ScratchWeightDiff are the context's two further
// scratch buffers: a layer computing in 16 bits makes its weights' 16-bit
// copy in the first and its weight gradient in the second, within one
// pass, so that a net holds one of each (ResNet-50's, 49 MiB each in
// BFLOAT16) rather than one per layer.
const (
	ScratchWeights = ScratchBuffers + iota
	ScratchWeightDiff
	scratchSlots
)

// Scratch returns scratch buffer i (< ScratchBuffers) of at least bytes:
// device memory shared by the context's layers, which run one after
// another on its stream, for values that live within one pass (a layer
// computing in 16 bits converts its FP32 bottoms and tops there). It
// grows as Workspace does, and counts in WorkspaceMoves.
func (c *Context) Scratch(i, bytes int) (cuda.DevicePtr, error) {
	if !c.OnGPU() {
		return 0, errHostContext
	}
	c.wsMu.Lock()
	defer c.wsMu.Unlock()
	if bytes <= c.scratchBytes[i] {
		return c.scratch[i], nil
	}
	if c.scratch[i] != 0 {
		if err := c.Synchronize(); err != nil {
			return 0, err
		}
		if err := c.dev.Free(c.scratch[i]); err != nil {
			return 0, err
		}
		c.scratch[i], c.scratchBytes[i] = 0, 0
	}
	p, err := c.dev.Alloc(bytes)
	if err != nil {
		return 0, err
	}
	c.scratch[i], c.scratchBytes[i] = p, bytes
	c.wsMoves++
	return p, nil
}

// WorkspaceMoves counts the times the workspace or a scratch buffer was
// replaced by a larger buffer. A recorded CUDA graph holds the address it was recorded with, so
// it is stale once this count changes.
func (c *Context) WorkspaceMoves() int {
	if !c.OnGPU() {
		return 0
	}
	c.wsMu.Lock()
	defer c.wsMu.Unlock()
	return c.wsMoves
}

// WorkspaceBytes returns the device bytes the shared workspace and the
// scratch buffers hold now.
func (c *Context) WorkspaceBytes() int {
	if !c.OnGPU() {
		return 0
	}
	c.wsMu.Lock()
	defer c.wsMu.Unlock()
	n := c.wsBytes
	for _, b := range c.scratchBytes {
		n += b
	}
	return n
}

// RNGSalt returns the context's RNG salt: a device uint64, allocated and
// zeroed on the first call, that the random number kernels of the
// context's device mix into their keys from then on
// (mathfn.Kernels.SetRNGSalt). A recorded CUDA graph replays its random
// number launches with their recorded keys; whoever replays it stores a
// new salt there before each replay (the solver: the pass's number). The
// salt lives as long as the context, so that no recorded graph can read
// it freed.
func (c *Context) RNGSalt() (cuda.DevicePtr, error) {
	if !c.OnGPU() {
		return 0, errHostContext
	}
	k, err := c.mathKernels()
	if err != nil {
		return 0, err
	}
	c.mathMu.Lock()
	defer c.mathMu.Unlock()
	if c.salt == 0 {
		p, err := c.dev.Alloc(8)
		if err != nil {
			return 0, err
		}
		if err := c.dev.Memset(p, 0, 8); err != nil {
			return 0, errors.Join(err, c.dev.Free(p))
		}
		c.salt = p
		k.SetRNGSalt(p)
	}
	return c.salt, nil
}
