// Declarations shared by module.c and the Go files of package pycaffe
// (python build tag): the CPython module caffe._caffe, and the calls the
// Go side makes into Python (layers written in Python, solver callbacks).
#ifndef GOCAFFE_PYCAFFE_H
#define GOCAFFE_PYCAFFE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

// GC_MAX_AXES is blob.MaxAxes.
#define GC_MAX_AXES 32

// Which Python exception a Go error becomes.
enum { GC_ERR_RUNTIME = 0, GC_ERR_IO = 1, GC_ERR_VALUE = 2, GC_ERR_INDEX = 3 };

// gc_err carries a Go error back to the module's functions: its message
// (from C.CString, freed by the module), the kind of exception to raise,
// and, when Python code that Go called raised (a Python layer, a solver
// callback), that exception (owned references), which is raised again with
// the message added as a note.
typedef struct {
	char *msg;
	int kind;
	PyObject *type, *value, *tb;
} gc_err;

// gc_pyerr is a Python exception caught while Go called Python: the
// exception (owned references), its formatted traceback and its last line
// (both from malloc, freed by Go).
typedef struct {
	PyObject *type, *value, *tb;
	char *text, *summary;
} gc_pyerr;

// gc_view is what Go hands out for a numpy view of a blob's host memory:
// the memory, its element size (4 or 8) and shape, and the handle of what
// keeps it pinned and alive, released when the view is freed.
typedef struct {
	void *buf;
	Py_ssize_t nbytes;
	int itemsize;
	int ndim;
	Py_ssize_t shape[GC_MAX_AXES];
	uintptr_t pin;
} gc_view;

PyObject *PyInit__caffe(void);

// gc_embed_start starts an interpreter in a process that has none (the
// gocaffe command built with the python tag), makes this module its
// caffe._caffe and releases the GIL. It returns 0, or -1 with *err (malloc).
int gc_embed_start(char **err);
int gc_py_initialized(void);

// Calls from Go into Python. Each takes the GIL itself (PyGILState_Ensure),
// so Go may call them from any thread; on a Python exception they return
// NULL or -1 and fill *e.
PyObject *gc_make_layer(const char *module, const char *cls, const char *param, Py_ssize_t nparam,
	const char *param_str, int phase, uintptr_t layer, gc_pyerr *e);
int gc_layer_call(PyObject *obj, const char *method, uintptr_t *bottoms, int nb, uintptr_t *tops, int nt,
	const unsigned char *prop, int np, gc_pyerr *e);
int gc_call0(PyObject *fn, gc_pyerr *e);
void gc_decref(PyObject *o);
void gc_incref(PyObject *o);

#endif
