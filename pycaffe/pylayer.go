//go:build python

package pycaffe

/*
#include "pycaffe.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// pyLayer is a Python layer that runs its class in Python, as Caffe's
// PythonLayer does: the class named by python_param (module, layer) is
// made when the layer is, with param_str and phase set on the object, and
// its setup, reshape, forward and backward get the bottoms and tops as
// caffe.Blob objects whose .data and .diff view the blobs' memory. Its
// self.blobs are the layer's learnable blobs, saved with the net's
// weights and shared as Go layers' are. It computes on the host, in GPU
// mode too (its blobs' memory moves there as Caffe's does).
type pyLayer[T layer.Float] struct {
	layer.Base[T]
	obj *C.PyObject // the Python object, referenced until Close
	// scratch handles of one call, reused.
	bottoms, tops []C.uintptr_t
	prop          []C.uchar
}

// pythonLayer is a pyLayer of either float type, as the module sees it.
type pythonLayer interface {
	object() *C.PyObject
}

func (l *pyLayer[T]) object() *C.PyObject { return l.obj }

func newPyLayer[T layer.Float](p *caffepb.LayerParameter) (layer.Layer[T], error) {
	l := &pyLayer[T]{}
	if err := l.Init(p); err != nil {
		return nil, err
	}
	if err := ensurePython(); err != nil {
		return nil, err
	}
	pp := p.GetPythonParam()
	param, err := proto.Marshal(p)
	if err != nil {
		return nil, err
	}
	module, class, paramStr := C.CString(pp.GetModule()), C.CString(pp.GetLayer()), C.CString(pp.GetParamStr())
	defer C.free(unsafe.Pointer(module))
	defer C.free(unsafe.Pointer(class))
	defer C.free(unsafe.Pointer(paramStr))
	cparam := C.CBytes(param)
	defer C.free(cparam)
	var pe C.gc_pyerr
	onPythonThread(func() {
		// The object's self.blobs reaches the layer through this handle,
		// which the capsule made of it owns.
		l.obj = C.gc_make_layer(module, class, (*C.char)(cparam), C.Py_ssize_t(len(param)), paramStr, C.int(l.Phase()), newHandle(blobHolder(l)), &pe)
	})
	if l.obj == nil {
		err := pyError(&pe)
		return nil, fmt.Errorf("python_param module %q layer %q: %w%s", pp.GetModule(), pp.GetLayer(), err, importHint(err))
	}
	return l, nil
}

// importHint explains an import of caffe that failed inside the gocaffe
// command: the Python package is not where Python looks.
func importHint(err *PyError) string {
	if strings.Contains(err.Summary, "No module named 'caffe") {
		return "\n(the Python package caffe is gocaffe's python/ folder, built by python/build: put that folder on PYTHONPATH, with the folder of the layer's module)"
	}
	return ""
}

// Type returns "Python", the type its prototxt gives.
func (*pyLayer[T]) Type() string { return "Python" }

// Counts: any number of bottoms and tops, as Caffe's PythonLayer.
func (*pyLayer[T]) Counts() layer.BlobCounts {
	return layer.BlobCounts{Bottom: layer.AtLeast(0), Top: layer.AtLeast(0)}
}

// call calls the object's method through caffe._bridge.call, with
// handles of the blobs (which the capsules made of them own) and, for
// backward, propagate_down.
func (l *pyLayer[T]) call(method string, bottom, top []*blob.Blob[T], prop []bool) error {
	if l.obj == nil {
		return fmt.Errorf("%s: the layer is closed", method)
	}
	l.bottoms, l.tops, l.prop = l.bottoms[:0], l.tops[:0], l.prop[:0]
	for _, b := range bottom {
		l.bottoms = append(l.bottoms, newHandle(b))
	}
	for _, t := range top {
		l.tops = append(l.tops, newHandle(t))
	}
	for _, p := range prop {
		v := C.uchar(0)
		if p {
			v = 1
		}
		l.prop = append(l.prop, v)
	}
	cmethod := C.CString(method)
	defer C.free(unsafe.Pointer(cmethod))
	var pe C.gc_pyerr
	var rc C.int
	onPythonThread(func() {
		rc = C.gc_layer_call(l.obj, cmethod, ptr(l.bottoms), C.int(len(l.bottoms)), ptr(l.tops), C.int(len(l.tops)),
			(*C.uchar)(ptr(l.prop)), C.int(len(l.prop)), &pe)
	})
	if rc != 0 {
		return fmt.Errorf("%s: %w", method, pyError(&pe))
	}
	return nil
}

// ptr returns the address of a slice's first element, nil for none. The
// slices hold no Go pointers, so C may read them during the call.
func ptr[E any](s []E) *E {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// LayerSetUp calls setup(bottom, top), after setting phase (Caffe sets it
// there too).
func (l *pyLayer[T]) LayerSetUp(bottom, top []*blob.Blob[T]) error {
	return l.call("setup", bottom, top, nil)
}

// Reshape calls reshape(bottom, top).
func (l *pyLayer[T]) Reshape(bottom, top []*blob.Blob[T]) error {
	return l.call("reshape", bottom, top, nil)
}

// ForwardCPU calls forward(bottom, top).
func (l *pyLayer[T]) ForwardCPU(bottom, top []*blob.Blob[T]) error {
	return l.call("forward", bottom, top, nil)
}

// BackwardCPU calls backward(top, propagate_down, bottom).
func (l *pyLayer[T]) BackwardCPU(top []*blob.Blob[T], propagateDown []bool, bottom []*blob.Blob[T]) error {
	return l.call("backward", bottom, top, propagateDown)
}

// Close drops the reference to the Python object (a net closes its
// layers when it is closed).
func (l *pyLayer[T]) Close() error {
	if l.obj != nil {
		obj := l.obj
		l.obj = nil
		onPythonThread(func() { C.gc_decref(obj) })
	}
	return nil
}

// The object's self.blobs: the layer's learnable blobs.

func (l *pyLayer[T]) blobCount() int { return len(l.Blobs()) }

func (l *pyLayer[T]) blobHandle(j int) (C.uintptr_t, error) {
	bs := l.Blobs()
	if j < 0 || j >= len(bs) {
		return 0, indexError(fmt.Sprintf("blobs[%d]: layer %q has %d blobs", j, l.Name(), len(bs)))
	}
	return newHandle(bs[j]), nil
}

func (l *pyLayer[T]) addBlob(shape []int) (C.uintptr_t, error) {
	b, err := l.NewBlob(shape...)
	if err != nil {
		return 0, fmt.Errorf("layer %q: add_blob%v: %w", l.Name(), shape, err)
	}
	l.AddBlob(b)
	return newHandle(b), nil
}
