//go:build python

package pycaffe

/*
#include "pycaffe.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"runtime"
	"strings"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/data"
	"github.com/gocaffe/gocaffe/internal/fileio"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/layer/datalayer"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
	"github.com/gocaffe/gocaffe/syncedmem"
)

// The functions of the module caffe._caffe (module.c calls them; the
// Python package calls the module). Each returns 0, or -1 with the error
// in e, which the module raises. Handles come in as capsules' values.

//export gcLayerTypes
func gcLayerTypes() *C.char { return C.CString(strings.Join(layer.Types(), "\n")) }

//export gcSetMode
func gcSetMode(gpu C.int, e *C.gc_err) C.int {
	return guard(e, func() error {
		state.Lock()
		state.gpu = gpu != 0
		state.Unlock()
		if gpu != 0 {
			// Fail here, not at the next net; the mode stays the CPU's.
			if _, err := currentContext(); err != nil {
				state.Lock()
				state.gpu = false
				state.Unlock()
				return err
			}
		}
		return nil
	})
}

//export gcMode
func gcMode() C.int {
	state.Lock()
	defer state.Unlock()
	if state.gpu {
		return 1
	}
	return 0
}

//export gcSetDevice
func gcSetDevice(id C.int, e *C.gc_err) C.int {
	return guard(e, func() error {
		if id < 0 {
			return fmt.Errorf("set_device(%d): a device is a number from 0", id)
		}
		state.Lock()
		state.deviceID = int(id)
		gpu := state.gpu
		state.Unlock()
		if gpu {
			_, err := currentContext()
			return err
		}
		return nil
	})
}

//export gcSetRandomSeed
func gcSetRandomSeed(seed C.longlong) {
	state.Lock()
	defer state.Unlock()
	state.seed, state.seeds = int64(seed), 0
	if state.seed < 0 {
		state.seed = -1
	}
}

//export gcSetLogLevel
func gcSetLogLevel(level C.int) {
	// glog's levels: 0 INFO, 1 WARNING, 2 ERROR, 3 FATAL (nothing here).
	l := [...]slog.Level{slog.LevelDebug + 1, slog.LevelWarn, slog.LevelError, slog.LevelError + 4}
	state.level.Set(l[min(max(int(level), 0), len(l)-1)])
}

//export gcLog
func gcLog(msg *C.char, level C.int) {
	l := slog.LevelInfo
	switch {
	case level == 1:
		l = slog.LevelWarn
	case level >= 2:
		l = slog.LevelError
	}
	logger().Log(context.Background(), l, C.GoString(msg))
}

// ---- nets -------------------------------------------------------------------

// netRef is a net Python holds. A net Python made is closed when Python
// lets it go; a solver's nets are the solver's to close.
type netRef struct {
	n   *net.Net[float32]
	own bool
}

func (r *netRef) release() {
	if r.own {
		if err := r.n.Close(); err != nil {
			logger().Warn(fmt.Sprintf("closing net %q: %v", r.n.Name(), err))
		}
	}
}

// netOf returns the net of a handle.
func netOf(h C.uintptr_t) (*net.Net[float32], error) {
	if r, ok := value(h).(*netRef); ok {
		return r.n, nil
	}
	return nil, errors.New("gocaffe: the handle is not a net's")
}

//export gcNetNew
func gcNetNew(path *C.char, phase, level C.int, stages, weights *C.char, out *C.uintptr_t, e *C.gc_err) C.int {
	return guard(e, func() error {
		if phase != C.int(caffepb.Phase_TRAIN) && phase != C.int(caffepb.Phase_TEST) {
			return fmt.Errorf("phase %d: a net's phase is caffe.TRAIN (0) or caffe.TEST (1)", phase)
		}
		ctx, err := currentContext()
		if err != nil {
			return err
		}
		st := &caffepb.NetState{Phase: caffepb.Phase(phase).Enum(), Level: proto.Int32(int32(level))}
		if s := C.GoString(stages); s != "" {
			st.Stage = strings.Split(s, "\n")
		}
		n, err := net.NewFromFile[float32](C.GoString(path), net.Options{State: st, Context: ctx, Seed: nextSeed(), Logger: logger()})
		if err != nil {
			return err
		}
		if w := C.GoString(weights); w != "" {
			if err := n.CopyTrainedLayersFromFile(w); err != nil {
				n.Close()
				return err
			}
		}
		*out = newHandle(&netRef{n: n, own: true})
		return nil
	})
}

// netInfo is a net's structure as the Python package reads it once: its
// layers with their blobs' indices, its blobs' names, inputs and outputs.
type netInfo struct {
	Name    string      `json:"name"`
	Phase   int         `json:"phase"`
	Layers  []layerInfo `json:"layers"`
	Blobs   []string    `json:"blobs"`
	Inputs  []int       `json:"inputs"`
	Outputs []int       `json:"outputs"`
	// LossWeights is each blob's weight in the net's loss (0 for a blob
	// that is no loss), Caffe's blob_loss_weights.
	LossWeights []float64 `json:"loss_weights"`
}

type layerInfo struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Bottoms []int  `json:"bottoms"`
	Tops    []int  `json:"tops"`
	// Python says the layer runs a class written in Python, whose object
	// net.layers gives, as pycaffe does.
	Python bool `json:"python"`
}

//export gcNetInfo
func gcNetInfo(h C.uintptr_t, out **C.char, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		g := n.Graph()
		info := netInfo{Name: n.Name(), Phase: int(n.Phase()), Blobs: n.BlobNames(), Inputs: []int{}, Outputs: []int{}}
		info.LossWeights = make([]float64, len(info.Blobs))
		for node := range g.Nodes() {
			li := layerInfo{Name: node.Name(), Type: node.Type(), Bottoms: []int{}, Tops: []int{}}
			for b := range node.Bottoms() {
				li.Bottoms = append(li.Bottoms, b.Index())
			}
			for t := range node.Tops() {
				if w := float64(node.Layer().LayerBase().Loss(len(li.Tops))); w != 0 {
					info.LossWeights[t.Index()] = w
				}
				li.Tops = append(li.Tops, t.Index())
			}
			_, li.Python = node.Layer().(pythonLayer)
			// Caffe's inputs are the tops of Input layers (the old input:
			// fields become one).
			if node.Type() == "Input" {
				info.Inputs = append(info.Inputs, li.Tops...)
			}
			info.Layers = append(info.Layers, li)
		}
		for o := range g.Outputs() {
			info.Outputs = append(info.Outputs, o.Index())
		}
		b, err := json.Marshal(info)
		if err != nil {
			return err
		}
		*out = C.CString(string(b))
		return nil
	})
}

// layerAt returns layer i of a net, or an IndexError.
func layerAt(n *net.Net[float32], i C.int) (layer.Layer[float32], error) {
	ls := n.Layers()
	if i < 0 || int(i) >= len(ls) {
		return nil, indexError(fmt.Sprintf("layer %d: net %q has %d layers", i, n.Name(), len(ls)))
	}
	return ls[i], nil
}

//export gcNetBlob
func gcNetBlob(h C.uintptr_t, i C.int, out *C.uintptr_t, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		bs := n.Blobs()
		if i < 0 || int(i) >= len(bs) {
			return indexError(fmt.Sprintf("blob %d: net %q has %d blobs", i, n.Name(), len(bs)))
		}
		*out = newHandle(bs[i])
		return nil
	})
}

//export gcNetLayerBlobCount
func gcNetLayerBlobCount(h C.uintptr_t, i C.int, count *C.int, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		l, err := layerAt(n, i)
		if err != nil {
			return err
		}
		*count = C.int(len(l.LayerBase().Blobs()))
		return nil
	})
}

//export gcNetLayerBlob
func gcNetLayerBlob(h C.uintptr_t, i, j C.int, out *C.uintptr_t, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		l, err := layerAt(n, i)
		if err != nil {
			return err
		}
		bs := l.LayerBase().Blobs()
		if j < 0 || int(j) >= len(bs) {
			return indexError(fmt.Sprintf("blob %d of layer %q: it has %d", j, l.LayerBase().Name(), len(bs)))
		}
		*out = newHandle(bs[j])
		return nil
	})
}

//export gcNetLayerObject
func gcNetLayerObject(h C.uintptr_t, i C.int, out **C.PyObject, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		l, err := layerAt(n, i)
		if err != nil {
			return err
		}
		if p, ok := l.(pythonLayer); ok {
			*out = p.object()
		}
		return nil
	})
}

// span checks a range of layers Python asks for.
func span(n *net.Net[float32], start, end C.int) error {
	nl := len(n.Layers())
	if start < 0 || end < 0 || int(start) >= nl || int(end) >= nl {
		return indexError(fmt.Sprintf("layers %d to %d: net %q has %d layers", start, end, n.Name(), nl))
	}
	return nil
}

//export gcNetForward
func gcNetForward(h C.uintptr_t, start, end C.int, loss *C.double, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		if err := span(n, start, end); err != nil {
			return err
		}
		l, err := n.ForwardFromTo(int(start), int(end))
		*loss = C.double(l)
		return err
	})
}

//export gcNetBackward
func gcNetBackward(h C.uintptr_t, start, end C.int, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		if err := span(n, start, end); err != nil {
			return err
		}
		return n.BackwardFromTo(int(start), int(end))
	})
}

//export gcNetReshape
func gcNetReshape(h C.uintptr_t, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		return n.Reshape()
	})
}

//export gcNetClearParamDiffs
func gcNetClearParamDiffs(h C.uintptr_t, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		return n.ClearParamDiffs()
	})
}

//export gcNetCopyFrom
func gcNetCopyFrom(h C.uintptr_t, path *C.char, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		return n.CopyTrainedLayersFromFile(C.GoString(path))
	})
}

//export gcNetSave
func gcNetSave(h C.uintptr_t, path *C.char, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		// Caffe's Net.save: the weights without their diffs, as a
		// .caffemodel, written to a temporary file and renamed.
		return protoio.WriteProtoToBinaryFile(n.ToProto(false), C.GoString(path))
	})
}

//export gcNetSaveHDF5
func gcNetSaveHDF5(h C.uintptr_t, path *C.char, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		return n.ToHDF5(C.GoString(path), false)
	})
}

//export gcNetLoadHDF5
func gcNetLoadHDF5(h C.uintptr_t, path *C.char, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		return n.CopyTrainedLayersFromHDF5(C.GoString(path))
	})
}

//export gcNetShareWith
func gcNetShareWith(h, other C.uintptr_t, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		o, err := netOf(other)
		if err != nil {
			return err
		}
		return n.ShareTrainedLayersWith(o)
	})
}

//export gcNetSetInputArrays
func gcNetSetInputArrays(h C.uintptr_t, li C.int, d *C.float, nd C.Py_ssize_t, lab *C.float, nl C.Py_ssize_t, e *C.gc_err) C.int {
	return guard(e, func() error {
		n, err := netOf(h)
		if err != nil {
			return err
		}
		l, err := layerAt(n, li)
		if err != nil {
			return err
		}
		md, ok := l.(*datalayer.MemoryData[float32])
		if !ok {
			return fmt.Errorf("layer %q is a %s: set_input_arrays feeds a MemoryData layer", l.LayerBase().Name(), l.Type())
		}
		// MemoryData keeps the slices it is given until the next Reset,
		// so they are copied out of Python's arrays into Go's heap.
		dataCopy := append([]float32(nil), unsafe.Slice((*float32)(unsafe.Pointer(d)), nd)...)
		labelCopy := append([]float32(nil), unsafe.Slice((*float32)(unsafe.Pointer(lab)), nl)...)
		return md.Reset(dataCopy, labelCopy, len(labelCopy))
	})
}

// ---- blobs ------------------------------------------------------------------

// A blob handle holds a *blob.Blob[float32], or a *blob.Blob[float64] in
// the Python layers of a float64 net (gradient checks).

//export gcBlobShape
func gcBlobShape(h C.uintptr_t, dims *C.longlong, n *C.int, e *C.gc_err) C.int {
	return guard(e, func() error {
		var shape []int
		switch b := value(h).(type) {
		case *blob.Blob[float32]:
			shape = b.Shape()
		case *blob.Blob[float64]:
			shape = b.Shape()
		default:
			return errors.New("gocaffe: the handle is not a blob's")
		}
		out := unsafe.Slice(dims, C.GC_MAX_AXES)
		for i, d := range shape {
			out[i] = C.longlong(d)
		}
		*n = C.int(len(shape))
		return nil
	})
}

//export gcBlobReshape
func gcBlobReshape(h C.uintptr_t, dims *C.longlong, n C.int, e *C.gc_err) C.int {
	return guard(e, func() error {
		shape := make([]int, n)
		for i, d := range unsafe.Slice(dims, n) {
			shape[i] = int(d)
		}
		switch b := value(h).(type) {
		case *blob.Blob[float32]:
			return b.Reshape(shape)
		case *blob.Blob[float64]:
			return b.Reshape(shape)
		}
		return errors.New("gocaffe: the handle is not a blob's")
	})
}

// viewPin keeps a blob's host memory where numpy sees it: pinned, for Go
// heap memory, and reachable, so that the SyncedMemory's cleanup cannot
// free page-locked CUDA memory under the view (see the package doc).
type viewPin struct {
	pin runtime.Pinner
	mem *syncedmem.SyncedMemory
}

func (p *viewPin) release() { p.pin.Unpin() }

//export gcBlobView
func gcBlobView(h C.uintptr_t, which C.int, v *C.gc_view, e *C.gc_err) C.int {
	return guard(e, func() error {
		switch b := value(h).(type) {
		case *blob.Blob[float32]:
			view(b, which != 0, v)
		case *blob.Blob[float64]:
			view(b, which != 0, v)
		default:
			return errors.New("gocaffe: the handle is not a blob's")
		}
		return nil
	})
}

// view fills v with b's host data (or diff), made current on the host and
// marked written there (Caffe's mutable_cpu_data, which pycaffe's .data
// is), pinned.
func view[T blob.Float](b *blob.Blob[T], diff bool, v *C.gc_view) {
	p := &viewPin{mem: b.Data()}
	var s []T
	if diff {
		p.mem, s = b.Diff(), b.MutableCPUDiff()
	} else {
		s = b.MutableCPUData()
	}
	size := int(unsafe.Sizeof(T(0)))
	if len(s) > 0 {
		p.pin.Pin(&s[0]) // before C holds it: pinned memory is C's to keep
		v.buf = unsafe.Pointer(&s[0])
	}
	v.nbytes = C.Py_ssize_t(len(s) * size)
	v.itemsize = C.int(size)
	v.ndim = C.int(b.NumAxes())
	for i, d := range b.Shape() {
		v.shape[i] = C.Py_ssize_t(d)
	}
	v.pin = newHandle(p)
}

// ---- the learnable blobs of Python layers (self.blobs) ----------------------

// blobHolder is a Python layer's Go side, as its self.blobs reaches it.
type blobHolder interface {
	blobCount() int
	blobHandle(j int) (C.uintptr_t, error)
	addBlob(shape []int) (C.uintptr_t, error)
}

func holderOf(h C.uintptr_t) (blobHolder, error) {
	if l, ok := value(h).(blobHolder); ok {
		return l, nil
	}
	return nil, errors.New("gocaffe: the handle is not a Python layer's")
}

//export gcLayerBlobCount
func gcLayerBlobCount(h C.uintptr_t, n *C.int, e *C.gc_err) C.int {
	return guard(e, func() error {
		l, err := holderOf(h)
		if err != nil {
			return err
		}
		*n = C.int(l.blobCount())
		return nil
	})
}

//export gcLayerBlob
func gcLayerBlob(h C.uintptr_t, j C.int, out *C.uintptr_t, e *C.gc_err) C.int {
	return guard(e, func() error {
		l, err := holderOf(h)
		if err != nil {
			return err
		}
		*out, err = l.blobHandle(int(j))
		return err
	})
}

//export gcLayerAddBlob
func gcLayerAddBlob(h C.uintptr_t, dims *C.longlong, n C.int, out *C.uintptr_t, e *C.gc_err) C.int {
	return guard(e, func() error {
		l, err := holderOf(h)
		if err != nil {
			return err
		}
		shape := make([]int, n)
		for i, d := range unsafe.Slice(dims, n) {
			shape[i] = int(d)
		}
		*out, err = l.addBlob(shape)
		return err
	})
}

// ---- solvers ----------------------------------------------------------------

// solverRef is a solver Python holds, and the Python callables of its
// add_callback, which it keeps referenced until Python lets it go.
type solverRef struct {
	s         *solver.Solver[float32]
	callbacks []*C.PyObject
}

func (r *solverRef) release() {
	if err := r.s.Close(); err != nil {
		logger().Warn(fmt.Sprintf("closing solver: %v", err))
	}
	onPythonThread(func() {
		for _, c := range r.callbacks {
			C.gc_decref(c)
		}
	})
	r.callbacks = nil
}

func solverOf(h C.uintptr_t) (*solverRef, error) {
	if r, ok := value(h).(*solverRef); ok {
		return r, nil
	}
	return nil, errors.New("gocaffe: the handle is not a solver's")
}

//export gcSolverNew
func gcSolverNew(path, typ *C.char, out *C.uintptr_t, e *C.gc_err) C.int {
	return guard(e, func() error {
		file := C.GoString(path)
		ctx, err := currentContext()
		if err != nil {
			return err
		}
		p := &caffepb.SolverParameter{}
		if err := (protoio.TextOptions{Logger: logger()}).ReadFile(file, p); err != nil {
			return err
		}
		// SGDSolver(file) and the other classes make their own type
		// whatever the file says, as pycaffe's do; get_solver reads it.
		if t := C.GoString(typ); t != "" {
			p.Type, p.SolverType = proto.String(t), nil
		}
		// caffe.set_random_seed seeds a solver whose file does not.
		if p.GetRandomSeed() < 0 {
			if s := nextSeed(); s >= 0 {
				p.RandomSeed = proto.Int64(s)
			}
		}
		s, err := solver.New[float32](p, solver.Options{Context: ctx, SolverFile: file, Logger: logger()})
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		*out = newHandle(&solverRef{s: s})
		return nil
	})
}

//export gcSolverNetCount
func gcSolverNetCount(h C.uintptr_t, n *C.int, e *C.gc_err) C.int {
	return guard(e, func() error {
		r, err := solverOf(h)
		if err != nil {
			return err
		}
		*n = C.int(1 + len(r.s.TestNets()))
		return nil
	})
}

//export gcSolverNet
func gcSolverNet(h C.uintptr_t, i C.int, out *C.uintptr_t, e *C.gc_err) C.int {
	return guard(e, func() error {
		r, err := solverOf(h)
		if err != nil {
			return err
		}
		nets := append([]*net.Net[float32]{r.s.Net()}, r.s.TestNets()...)
		if i < 0 || int(i) >= len(nets) {
			return indexError(fmt.Sprintf("net %d: the solver has %d", i, len(nets)))
		}
		*out = newHandle(&netRef{n: nets[i]})
		return nil
	})
}

//export gcSolverIter
func gcSolverIter(h C.uintptr_t, it *C.longlong, e *C.gc_err) C.int {
	return guard(e, func() error {
		r, err := solverOf(h)
		if err != nil {
			return err
		}
		*it = C.longlong(r.s.Iter())
		return nil
	})
}

//export gcSolverStep
func gcSolverStep(h C.uintptr_t, n C.int, e *C.gc_err) C.int {
	return guard(e, func() error {
		r, err := solverOf(h)
		if err != nil {
			return err
		}
		if n < 0 {
			return fmt.Errorf("step(%d): the number of iterations cannot be negative", n)
		}
		return r.s.Step(int(n))
	})
}

//export gcSolverSolve
func gcSolverSolve(h C.uintptr_t, resume *C.char, e *C.gc_err) C.int {
	return guard(e, func() error {
		r, err := solverOf(h)
		if err != nil {
			return err
		}
		return r.s.Solve(C.GoString(resume))
	})
}

//export gcSolverRestore
func gcSolverRestore(h C.uintptr_t, path *C.char, e *C.gc_err) C.int {
	return guard(e, func() error {
		r, err := solverOf(h)
		if err != nil {
			return err
		}
		return r.s.Restore(C.GoString(path))
	})
}

//export gcSolverSnapshot
func gcSolverSnapshot(h C.uintptr_t, model, state **C.char, e *C.gc_err) C.int {
	return guard(e, func() error {
		r, err := solverOf(h)
		if err != nil {
			return err
		}
		m, s, err := r.s.Snapshot()
		if err != nil {
			return err
		}
		*model, *state = C.CString(m), C.CString(s)
		return nil
	})
}

//export gcSolverApplyUpdate
func gcSolverApplyUpdate(h C.uintptr_t, e *C.gc_err) C.int {
	return guard(e, func() error {
		r, err := solverOf(h)
		if err != nil {
			return err
		}
		return r.s.ApplyUpdate()
	})
}

//export gcSolverAddCallback
func gcSolverAddCallback(h C.uintptr_t, onStart, onGradientsReady *C.PyObject, e *C.gc_err) C.int {
	return guard(e, func() error {
		r, err := solverOf(h)
		if err != nil {
			return err
		}
		// The references are the solver's now (dropped by release).
		call := func(fn *C.PyObject, what string) func(*solver.Solver[float32]) error {
			r.callbacks = append(r.callbacks, fn)
			return func(*solver.Solver[float32]) error {
				var pe C.gc_pyerr
				var rc C.int
				onPythonThread(func() { rc = C.gc_call0(fn, &pe) })
				if rc != 0 {
					return fmt.Errorf("%s callback: %w", what, pyError(&pe))
				}
				return nil
			}
		}
		if onStart != nil {
			r.s.OnStart(call(onStart, "on_start"))
		}
		if onGradientsReady != nil {
			r.s.OnGradientsReady(call(onGradientsReady, "on_gradients_ready"))
		}
		return nil
	})
}

//export gcSolverParam
func gcSolverParam(h C.uintptr_t, out **C.char, n *C.int, e *C.gc_err) C.int {
	return guard(e, func() error {
		r, err := solverOf(h)
		if err != nil {
			return err
		}
		b, err := proto.Marshal(r.s.Param())
		if err != nil {
			return err
		}
		*out, *n = (*C.char)(C.CBytes(b)), C.int(len(b))
		return nil
	})
}

// ---- images -------------------------------------------------------------------

//export gcLoadImage
func gcLoadImage(path *C.char, color C.int, out **C.char, h, w, c *C.int, e *C.gc_err) C.int {
	return guard(e, func() error {
		file := C.GoString(path)
		b, err := fileio.ReadFile(file, fileio.ProtoLimit)
		if err != nil {
			return err
		}
		img, err := data.DecodeImage(b, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		pix, ch, ih, iw := hwcRGB(img, color != 0)
		*out, *h, *w, *c = (*C.char)(C.CBytes(pix)), C.int(ih), C.int(iw), C.int(ch)
		return nil
	})
}

// hwcRGB returns an image's pixels in the layout skimage.io.imread gives
// caffe.io.load_image: rows, columns, then R, G, B (one gray channel
// without colour).
func hwcRGB(img image.Image, color bool) (pix []byte, c, h, w int) {
	mode := data.Gray
	if color {
		mode = data.Color
	}
	c, h, w, chw := data.ImagePixels(img, mode, nil) // channel-major, B G R
	pix = make([]byte, len(chw))
	for ch := range c {
		src := c - 1 - ch // BGR to RGB
		for i := range h * w {
			pix[i*c+ch] = chw[src*h*w+i]
		}
	}
	return pix, c, h, w
}
