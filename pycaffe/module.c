//go:build python

// The CPython module caffe._caffe: the functions the Python package calls,
// each parsing its arguments, calling the Go function of the same purpose
// (exports.go) and turning its result or error into Python; the buffer
// type through which numpy views blobs' memory; and the calls Go makes
// into Python. The Python package (python/caffe) builds pycaffe's
// interface on top; nothing here is meant for users directly.
#include "pycaffe.h"
#include "_cgo_export.h"

// Every Go object Python holds (a net, a solver, a blob, a layer) is a
// cgo.Handle inside a capsule of this name; freeing the capsule releases
// the handle, and with it whatever Go closes then (gcRelease).
static const char *CAP = "gocaffe.handle";

static void cap_free(PyObject *cap) {
	void *p = PyCapsule_GetPointer(cap, CAP);
	if (p != NULL) {
		gcRelease((uintptr_t)p);
	} else {
		PyErr_Clear();
	}
}

// wrap hands handle h to a new capsule, or releases it if none can be made.
static PyObject *wrap(uintptr_t h) {
	PyObject *c = PyCapsule_New((void *)h, CAP, cap_free);
	if (c == NULL) {
		gcRelease(h);
	}
	return c;
}

// handle is an "O&" converter from a capsule to its handle.
static int handle(PyObject *o, void *out) {
	void *p = PyCapsule_GetPointer(o, CAP);
	if (p == NULL) {
		return 0;
	}
	*(uintptr_t *)out = (uintptr_t)p;
	return 1;
}

// add_note adds a note to the exception being raised (Python 3.11's
// BaseException.add_note; older Pythons raise it without).
static void add_note(const char *note) {
	PyObject *t, *v, *tb;
	PyErr_Fetch(&t, &v, &tb);
	PyErr_NormalizeException(&t, &v, &tb);
	if (v != NULL) {
		PyObject *r = PyObject_CallMethod(v, "add_note", "s", note);
		if (r == NULL) {
			PyErr_Clear();
		}
		Py_XDECREF(r);
	}
	PyErr_Restore(t, v, tb);
}

// raise raises the error Go returned and returns NULL.
static PyObject *raise(gc_err *e) {
	const char *msg = e->msg != NULL ? e->msg : "gocaffe: unknown error";
	if (e->type != NULL) {
		PyErr_Restore(e->type, e->value, e->tb);
		add_note(msg);
	} else {
		PyObject *exc = PyExc_RuntimeError;
		switch (e->kind) {
		case GC_ERR_IO:
			exc = PyExc_OSError;
			break;
		case GC_ERR_VALUE:
			exc = PyExc_ValueError;
			break;
		case GC_ERR_INDEX:
			exc = PyExc_IndexError;
			break;
		}
		PyErr_SetString(exc, msg);
	}
	free(e->msg);
	return NULL;
}

// take_string returns a Python str of a string Go made (C.CString), and
// frees it.
static PyObject *take_string(char *s) {
	PyObject *r = PyUnicode_FromString(s != NULL ? s : "");
	free(s);
	return r;
}

// shape_arg reads a sequence of ints (a shape) into dims.
static int shape_arg(PyObject *seq, long long *dims, int *n) {
	PyObject *fast = PySequence_Fast(seq, "a shape must be a sequence of ints");
	if (fast == NULL) {
		return -1;
	}
	Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
	if (len > GC_MAX_AXES) {
		Py_DECREF(fast);
		PyErr_Format(PyExc_ValueError, "a blob has at most %d axes, the shape has %zd", GC_MAX_AXES, len);
		return -1;
	}
	for (Py_ssize_t i = 0; i < len; i++) {
		long long d = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
		if (d == -1 && PyErr_Occurred()) {
			Py_DECREF(fast);
			return -1;
		}
		dims[i] = d;
	}
	*n = (int)len;
	Py_DECREF(fast);
	return 0;
}

// ---- the buffer of a numpy view --------------------------------------------

// BlobBuffer exposes a blob's host data or diff through the buffer
// protocol, with the blob's shape and element type, writable: numpy
// arrays made from it (np.asarray) view the memory itself. It holds the
// Python object it came from (owner: the Blob, which holds its net) and
// the Go pin that keeps the memory where it is, until the last array
// viewing it is gone.
typedef struct {
	PyObject_HEAD
	gc_view v;
	Py_ssize_t strides[GC_MAX_AXES];
	PyObject *owner;
} BlobBuffer;

static char empty_buffer[8]; // the memory of a view of no elements

static int bb_getbuffer(PyObject *o, Py_buffer *view, int flags) {
	BlobBuffer *self = (BlobBuffer *)o;
	view->obj = o;
	Py_INCREF(o);
	view->buf = self->v.buf != NULL ? self->v.buf : empty_buffer;
	view->len = self->v.nbytes;
	view->readonly = 0;
	view->itemsize = self->v.itemsize;
	view->format = (flags & PyBUF_FORMAT) ? (self->v.itemsize == 4 ? "f" : "d") : NULL;
	if (flags & PyBUF_ND) {
		view->ndim = self->v.ndim;
		view->shape = self->v.ndim > 0 ? self->v.shape : NULL;
	} else {
		view->ndim = 1; // a plain run of bytes, as PyBUF_SIMPLE asks
		view->shape = NULL;
	}
	view->strides = ((flags & PyBUF_STRIDES) == PyBUF_STRIDES && self->v.ndim > 0) ? self->strides : NULL;
	view->suboffsets = NULL;
	view->internal = NULL;
	return 0;
}

static void bb_dealloc(PyObject *o) {
	BlobBuffer *self = (BlobBuffer *)o;
	if (self->v.pin != 0) {
		gcRelease(self->v.pin);
	}
	Py_XDECREF(self->owner);
	Py_TYPE(o)->tp_free(o);
}

static PyBufferProcs bb_as_buffer = {bb_getbuffer, NULL};

static PyTypeObject BlobBufferType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "caffe._caffe.BlobBuffer",
	.tp_basicsize = sizeof(BlobBuffer),
	.tp_dealloc = bb_dealloc,
	.tp_as_buffer = &bb_as_buffer,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The host memory of a blob's data or diff, for numpy to view.",
};

// ---- module functions --------------------------------------------------------

static PyObject *m_layer_type_list(PyObject *self, PyObject *args) {
	return take_string(gcLayerTypes());
}

static PyObject *m_set_mode(PyObject *self, PyObject *args) {
	int gpu;
	if (!PyArg_ParseTuple(args, "p", &gpu)) {
		return NULL;
	}
	gc_err e = {0};
	if (gcSetMode(gpu, &e) != 0) {
		return raise(&e);
	}
	Py_RETURN_NONE;
}

static PyObject *m_set_device(PyObject *self, PyObject *args) {
	int id;
	if (!PyArg_ParseTuple(args, "i", &id)) {
		return NULL;
	}
	gc_err e = {0};
	if (gcSetDevice(id, &e) != 0) {
		return raise(&e);
	}
	Py_RETURN_NONE;
}

static PyObject *m_mode(PyObject *self, PyObject *args) {
	return PyLong_FromLong(gcMode());
}

static PyObject *m_set_random_seed(PyObject *self, PyObject *args) {
	long long seed;
	if (!PyArg_ParseTuple(args, "L", &seed)) {
		return NULL;
	}
	gcSetRandomSeed(seed);
	Py_RETURN_NONE;
}

static PyObject *m_set_log_level(PyObject *self, PyObject *args) {
	int level;
	if (!PyArg_ParseTuple(args, "i", &level)) {
		return NULL;
	}
	gcSetLogLevel(level);
	Py_RETURN_NONE;
}

static PyObject *m_log(PyObject *self, PyObject *args) {
	const char *msg;
	int level;
	if (!PyArg_ParseTuple(args, "si", &msg, &level)) {
		return NULL;
	}
	gcLog((char *)msg, level);
	Py_RETURN_NONE;
}

static PyObject *m_net_new(PyObject *self, PyObject *args) {
	const char *path, *stages, *weights;
	int phase, level;
	if (!PyArg_ParseTuple(args, "siiss", &path, &phase, &level, &stages, &weights)) {
		return NULL;
	}
	gc_err e = {0};
	uintptr_t h = 0;
	if (gcNetNew((char *)path, phase, level, (char *)stages, (char *)weights, &h, &e) != 0) {
		return raise(&e);
	}
	return wrap(h);
}

static PyObject *m_net_info(PyObject *self, PyObject *args) {
	uintptr_t h;
	if (!PyArg_ParseTuple(args, "O&", handle, &h)) {
		return NULL;
	}
	gc_err e = {0};
	char *out = NULL;
	if (gcNetInfo(h, &out, &e) != 0) {
		return raise(&e);
	}
	return take_string(out);
}

static PyObject *m_net_blob(PyObject *self, PyObject *args) {
	uintptr_t h, b = 0;
	int i;
	if (!PyArg_ParseTuple(args, "O&i", handle, &h, &i)) {
		return NULL;
	}
	gc_err e = {0};
	if (gcNetBlob(h, i, &b, &e) != 0) {
		return raise(&e);
	}
	return wrap(b);
}

static PyObject *m_net_layer_blobs(PyObject *self, PyObject *args) {
	uintptr_t h;
	int i;
	if (!PyArg_ParseTuple(args, "O&i", handle, &h, &i)) {
		return NULL;
	}
	gc_err e = {0};
	int n = 0;
	if (gcNetLayerBlobCount(h, i, &n, &e) != 0) {
		return raise(&e);
	}
	PyObject *list = PyList_New(n);
	if (list == NULL) {
		return NULL;
	}
	for (int j = 0; j < n; j++) {
		uintptr_t b = 0;
		if (gcNetLayerBlob(h, i, j, &b, &e) != 0) {
			Py_DECREF(list);
			return raise(&e);
		}
		PyObject *c = wrap(b);
		if (c == NULL) {
			Py_DECREF(list);
			return NULL;
		}
		PyList_SET_ITEM(list, j, c);
	}
	return list;
}

static PyObject *m_net_layer_object(PyObject *self, PyObject *args) {
	uintptr_t h;
	int i;
	if (!PyArg_ParseTuple(args, "O&i", handle, &h, &i)) {
		return NULL;
	}
	gc_err e = {0};
	PyObject *o = NULL;
	if (gcNetLayerObject(h, i, &o, &e) != 0) {
		return raise(&e);
	}
	if (o == NULL) {
		Py_RETURN_NONE;
	}
	Py_INCREF(o);
	return o;
}

static PyObject *m_net_forward(PyObject *self, PyObject *args) {
	uintptr_t h;
	int start, end;
	if (!PyArg_ParseTuple(args, "O&ii", handle, &h, &start, &end)) {
		return NULL;
	}
	gc_err e = {0};
	double loss = 0;
	if (gcNetForward(h, start, end, &loss, &e) != 0) {
		return raise(&e);
	}
	return PyFloat_FromDouble(loss);
}

static PyObject *m_net_backward(PyObject *self, PyObject *args) {
	uintptr_t h;
	int start, end;
	if (!PyArg_ParseTuple(args, "O&ii", handle, &h, &start, &end)) {
		return NULL;
	}
	gc_err e = {0};
	if (gcNetBackward(h, start, end, &e) != 0) {
		return raise(&e);
	}
	Py_RETURN_NONE;
}

// net_op runs a Go function of a net and nothing else (reshape, clearing
// the parameter diffs).
static PyObject *net_op(PyObject *args, int (*f)(uintptr_t, gc_err *)) {
	uintptr_t h;
	if (!PyArg_ParseTuple(args, "O&", handle, &h)) {
		return NULL;
	}
	gc_err e = {0};
	if (f(h, &e) != 0) {
		return raise(&e);
	}
	Py_RETURN_NONE;
}

static PyObject *m_net_reshape(PyObject *self, PyObject *args) { return net_op(args, gcNetReshape); }
static PyObject *m_net_clear_param_diffs(PyObject *self, PyObject *args) { return net_op(args, gcNetClearParamDiffs); }

// net_file runs a Go function of a net and a file name.
static PyObject *net_file(PyObject *args, int (*f)(uintptr_t, char *, gc_err *)) {
	uintptr_t h;
	PyObject *path;
	if (!PyArg_ParseTuple(args, "O&O&", handle, &h, PyUnicode_FSConverter, &path)) {
		return NULL;
	}
	gc_err e = {0};
	int rc = f(h, PyBytes_AS_STRING(path), &e);
	Py_DECREF(path);
	if (rc != 0) {
		return raise(&e);
	}
	Py_RETURN_NONE;
}

static PyObject *m_net_copy_from(PyObject *self, PyObject *args) { return net_file(args, gcNetCopyFrom); }
static PyObject *m_net_save(PyObject *self, PyObject *args) { return net_file(args, gcNetSave); }
static PyObject *m_net_save_hdf5(PyObject *self, PyObject *args) { return net_file(args, gcNetSaveHDF5); }
static PyObject *m_net_load_hdf5(PyObject *self, PyObject *args) { return net_file(args, gcNetLoadHDF5); }

static PyObject *m_net_share_with(PyObject *self, PyObject *args) {
	uintptr_t h, other;
	if (!PyArg_ParseTuple(args, "O&O&", handle, &h, handle, &other)) {
		return NULL;
	}
	gc_err e = {0};
	if (gcNetShareWith(h, other, &e) != 0) {
		return raise(&e);
	}
	Py_RETURN_NONE;
}

// float_buffer gets a C-contiguous float32 buffer of obj.
static int float_buffer(PyObject *obj, Py_buffer *b, const char *what) {
	if (PyObject_GetBuffer(obj, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
		return -1;
	}
	if (b->itemsize != 4 || b->format == NULL || strcmp(b->format, "f") != 0) {
		PyErr_Format(PyExc_ValueError, "%s must be a C-contiguous float32 array (got format %s)", what, b->format ? b->format : "B");
		PyBuffer_Release(b);
		return -1;
	}
	return 0;
}

static PyObject *m_net_set_input_arrays(PyObject *self, PyObject *args) {
	uintptr_t h;
	PyObject *data, *labels;
	int layer;
	if (!PyArg_ParseTuple(args, "O&OOi", handle, &h, &data, &labels, &layer)) {
		return NULL;
	}
	Py_buffer d, l;
	if (float_buffer(data, &d, "data") != 0) {
		return NULL;
	}
	if (float_buffer(labels, &l, "labels") != 0) {
		PyBuffer_Release(&d);
		return NULL;
	}
	gc_err e = {0};
	int rc = gcNetSetInputArrays(h, layer, (float *)d.buf, d.len / 4, (float *)l.buf, l.len / 4, &e);
	PyBuffer_Release(&d);
	PyBuffer_Release(&l);
	if (rc != 0) {
		return raise(&e);
	}
	Py_RETURN_NONE;
}

static PyObject *m_blob_shape(PyObject *self, PyObject *args) {
	uintptr_t h;
	if (!PyArg_ParseTuple(args, "O&", handle, &h)) {
		return NULL;
	}
	gc_err e = {0};
	long long dims[GC_MAX_AXES];
	int n = 0;
	if (gcBlobShape(h, dims, &n, &e) != 0) {
		return raise(&e);
	}
	PyObject *t = PyTuple_New(n);
	if (t == NULL) {
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		PyObject *d = PyLong_FromLongLong(dims[i]);
		if (d == NULL) {
			Py_DECREF(t);
			return NULL;
		}
		PyTuple_SET_ITEM(t, i, d);
	}
	return t;
}

static PyObject *m_blob_reshape(PyObject *self, PyObject *args) {
	uintptr_t h;
	PyObject *shape;
	if (!PyArg_ParseTuple(args, "O&O", handle, &h, &shape)) {
		return NULL;
	}
	long long dims[GC_MAX_AXES];
	int n = 0;
	if (shape_arg(shape, dims, &n) != 0) {
		return NULL;
	}
	gc_err e = {0};
	if (gcBlobReshape(h, dims, n, &e) != 0) {
		return raise(&e);
	}
	Py_RETURN_NONE;
}

// blob_view returns the BlobBuffer of a blob's data (which 0) or diff (1),
// holding owner.
static PyObject *m_blob_view(PyObject *self, PyObject *args) {
	uintptr_t h;
	int which;
	PyObject *owner;
	if (!PyArg_ParseTuple(args, "O&iO", handle, &h, &which, &owner)) {
		return NULL;
	}
	BlobBuffer *bb = PyObject_New(BlobBuffer, &BlobBufferType);
	if (bb == NULL) {
		return NULL;
	}
	memset(&bb->v, 0, sizeof bb->v);
	bb->owner = NULL;
	gc_err e = {0};
	if (gcBlobView(h, which, &bb->v, &e) != 0) {
		Py_DECREF(bb);
		return raise(&e);
	}
	Py_ssize_t stride = bb->v.itemsize;
	for (int i = bb->v.ndim - 1; i >= 0; i--) {
		bb->strides[i] = stride;
		stride *= bb->v.shape[i];
	}
	Py_INCREF(owner);
	bb->owner = owner;
	return (PyObject *)bb;
}

static PyObject *m_layer_blobs(PyObject *self, PyObject *args) {
	uintptr_t h;
	if (!PyArg_ParseTuple(args, "O&", handle, &h)) {
		return NULL;
	}
	gc_err e = {0};
	int n = 0;
	if (gcLayerBlobCount(h, &n, &e) != 0) {
		return raise(&e);
	}
	PyObject *list = PyList_New(n);
	if (list == NULL) {
		return NULL;
	}
	for (int j = 0; j < n; j++) {
		uintptr_t b = 0;
		if (gcLayerBlob(h, j, &b, &e) != 0) {
			Py_DECREF(list);
			return raise(&e);
		}
		PyObject *c = wrap(b);
		if (c == NULL) {
			Py_DECREF(list);
			return NULL;
		}
		PyList_SET_ITEM(list, j, c);
	}
	return list;
}

static PyObject *m_layer_add_blob(PyObject *self, PyObject *args) {
	uintptr_t h, b = 0;
	PyObject *shape;
	if (!PyArg_ParseTuple(args, "O&O", handle, &h, &shape)) {
		return NULL;
	}
	long long dims[GC_MAX_AXES];
	int n = 0;
	if (shape_arg(shape, dims, &n) != 0) {
		return NULL;
	}
	gc_err e = {0};
	if (gcLayerAddBlob(h, dims, n, &b, &e) != 0) {
		return raise(&e);
	}
	return wrap(b);
}

static PyObject *m_solver_new(PyObject *self, PyObject *args) {
	PyObject *path;
	const char *type;
	if (!PyArg_ParseTuple(args, "O&s", PyUnicode_FSConverter, &path, &type)) {
		return NULL;
	}
	gc_err e = {0};
	uintptr_t h = 0;
	int rc = gcSolverNew(PyBytes_AS_STRING(path), (char *)type, &h, &e);
	Py_DECREF(path);
	if (rc != 0) {
		return raise(&e);
	}
	return wrap(h);
}

static PyObject *m_solver_nets(PyObject *self, PyObject *args) {
	uintptr_t h;
	if (!PyArg_ParseTuple(args, "O&", handle, &h)) {
		return NULL;
	}
	gc_err e = {0};
	int n = 0;
	if (gcSolverNetCount(h, &n, &e) != 0) {
		return raise(&e);
	}
	PyObject *list = PyList_New(n);
	if (list == NULL) {
		return NULL;
	}
	for (int i = 0; i < n; i++) { // the train net, then the test nets
		uintptr_t b = 0;
		if (gcSolverNet(h, i, &b, &e) != 0) {
			Py_DECREF(list);
			return raise(&e);
		}
		PyObject *c = wrap(b);
		if (c == NULL) {
			Py_DECREF(list);
			return NULL;
		}
		PyList_SET_ITEM(list, i, c);
	}
	return list;
}

static PyObject *m_solver_iter(PyObject *self, PyObject *args) {
	uintptr_t h;
	if (!PyArg_ParseTuple(args, "O&", handle, &h)) {
		return NULL;
	}
	gc_err e = {0};
	long long it = 0;
	if (gcSolverIter(h, &it, &e) != 0) {
		return raise(&e);
	}
	return PyLong_FromLongLong(it);
}

static PyObject *m_solver_step(PyObject *self, PyObject *args) {
	uintptr_t h;
	int n;
	if (!PyArg_ParseTuple(args, "O&i", handle, &h, &n)) {
		return NULL;
	}
	gc_err e = {0};
	if (gcSolverStep(h, n, &e) != 0) {
		return raise(&e);
	}
	Py_RETURN_NONE;
}

// solver_file runs a Go function of a solver and a file name ("" for none).
static PyObject *solver_file(PyObject *args, int (*f)(uintptr_t, char *, gc_err *)) {
	uintptr_t h;
	PyObject *path;
	if (!PyArg_ParseTuple(args, "O&O&", handle, &h, PyUnicode_FSConverter, &path)) {
		return NULL;
	}
	gc_err e = {0};
	int rc = f(h, PyBytes_AS_STRING(path), &e);
	Py_DECREF(path);
	if (rc != 0) {
		return raise(&e);
	}
	Py_RETURN_NONE;
}

static PyObject *m_solver_solve(PyObject *self, PyObject *args) { return solver_file(args, gcSolverSolve); }
static PyObject *m_solver_restore(PyObject *self, PyObject *args) { return solver_file(args, gcSolverRestore); }

static PyObject *m_solver_snapshot(PyObject *self, PyObject *args) {
	uintptr_t h;
	if (!PyArg_ParseTuple(args, "O&", handle, &h)) {
		return NULL;
	}
	gc_err e = {0};
	char *model = NULL, *state = NULL;
	if (gcSolverSnapshot(h, &model, &state, &e) != 0) {
		return raise(&e);
	}
	PyObject *m = take_string(model), *s = take_string(state);
	if (m == NULL || s == NULL) {
		Py_XDECREF(m);
		Py_XDECREF(s);
		return NULL;
	}
	return Py_BuildValue("(NN)", m, s);
}

static PyObject *m_solver_apply_update(PyObject *self, PyObject *args) {
	return net_op(args, gcSolverApplyUpdate);
}

static PyObject *m_solver_add_callback(PyObject *self, PyObject *args) {
	uintptr_t h;
	PyObject *on_start, *on_gradients_ready;
	if (!PyArg_ParseTuple(args, "O&OO", handle, &h, &on_start, &on_gradients_ready)) {
		return NULL;
	}
	if ((on_start != Py_None && !PyCallable_Check(on_start)) || (on_gradients_ready != Py_None && !PyCallable_Check(on_gradients_ready))) {
		PyErr_SetString(PyExc_TypeError, "add_callback takes two callables (on_start, on_gradients_ready), or None for either");
		return NULL;
	}
	// Go keeps a reference to each callable; releasing the solver drops
	// them.
	PyObject *s = on_start == Py_None ? NULL : on_start;
	PyObject *g = on_gradients_ready == Py_None ? NULL : on_gradients_ready;
	Py_XINCREF(s);
	Py_XINCREF(g);
	gc_err e = {0};
	if (gcSolverAddCallback(h, s, g, &e) != 0) {
		Py_XDECREF(s);
		Py_XDECREF(g);
		return raise(&e);
	}
	Py_RETURN_NONE;
}

static PyObject *m_solver_param(PyObject *self, PyObject *args) {
	uintptr_t h;
	if (!PyArg_ParseTuple(args, "O&", handle, &h)) {
		return NULL;
	}
	gc_err e = {0};
	char *buf = NULL;
	int n = 0;
	if (gcSolverParam(h, &buf, &n, &e) != 0) {
		return raise(&e);
	}
	PyObject *r = PyBytes_FromStringAndSize(buf, n);
	free(buf);
	return r;
}

static PyObject *m_load_image(PyObject *self, PyObject *args) {
	PyObject *path;
	int color;
	if (!PyArg_ParseTuple(args, "O&p", PyUnicode_FSConverter, &path, &color)) {
		return NULL;
	}
	gc_err e = {0};
	char *pix = NULL;
	int h = 0, w = 0, c = 0;
	int rc = gcLoadImage(PyBytes_AS_STRING(path), color, &pix, &h, &w, &c, &e);
	Py_DECREF(path);
	if (rc != 0) {
		return raise(&e);
	}
	PyObject *b = PyBytes_FromStringAndSize(pix, (Py_ssize_t)h * w * c);
	free(pix);
	if (b == NULL) {
		return NULL;
	}
	return Py_BuildValue("(Niii)", b, h, w, c);
}

static PyMethodDef methods[] = {
	{"layer_type_list", m_layer_type_list, METH_NOARGS, "The registered layer types, one a line."},
	{"set_mode", m_set_mode, METH_VARARGS, "set_mode(gpu): the device of the nets and solvers made after it."},
	{"mode", m_mode, METH_NOARGS, "1 in GPU mode, 0 in CPU mode."},
	{"set_device", m_set_device, METH_VARARGS, "set_device(id): the GPU of GPU mode."},
	{"set_random_seed", m_set_random_seed, METH_VARARGS, "set_random_seed(seed)"},
	{"set_log_level", m_set_log_level, METH_VARARGS, "set_log_level(level): glog's 0 INFO, 1 WARNING, 2 ERROR, 3 none."},
	{"log", m_log, METH_VARARGS, "log(msg, level): a log line in Caffe's format."},
	{"net_new", m_net_new, METH_VARARGS, NULL},
	{"net_info", m_net_info, METH_VARARGS, NULL},
	{"net_blob", m_net_blob, METH_VARARGS, NULL},
	{"net_layer_blobs", m_net_layer_blobs, METH_VARARGS, NULL},
	{"net_layer_object", m_net_layer_object, METH_VARARGS, NULL},
	{"net_forward", m_net_forward, METH_VARARGS, NULL},
	{"net_backward", m_net_backward, METH_VARARGS, NULL},
	{"net_reshape", m_net_reshape, METH_VARARGS, NULL},
	{"net_clear_param_diffs", m_net_clear_param_diffs, METH_VARARGS, NULL},
	{"net_copy_from", m_net_copy_from, METH_VARARGS, NULL},
	{"net_save", m_net_save, METH_VARARGS, NULL},
	{"net_save_hdf5", m_net_save_hdf5, METH_VARARGS, NULL},
	{"net_load_hdf5", m_net_load_hdf5, METH_VARARGS, NULL},
	{"net_share_with", m_net_share_with, METH_VARARGS, NULL},
	{"net_set_input_arrays", m_net_set_input_arrays, METH_VARARGS, NULL},
	{"blob_shape", m_blob_shape, METH_VARARGS, NULL},
	{"blob_reshape", m_blob_reshape, METH_VARARGS, NULL},
	{"blob_view", m_blob_view, METH_VARARGS, NULL},
	{"layer_blobs", m_layer_blobs, METH_VARARGS, NULL},
	{"layer_add_blob", m_layer_add_blob, METH_VARARGS, NULL},
	{"solver_new", m_solver_new, METH_VARARGS, NULL},
	{"solver_nets", m_solver_nets, METH_VARARGS, NULL},
	{"solver_iter", m_solver_iter, METH_VARARGS, NULL},
	{"solver_step", m_solver_step, METH_VARARGS, NULL},
	{"solver_solve", m_solver_solve, METH_VARARGS, NULL},
	{"solver_restore", m_solver_restore, METH_VARARGS, NULL},
	{"solver_snapshot", m_solver_snapshot, METH_VARARGS, NULL},
	{"solver_apply_update", m_solver_apply_update, METH_VARARGS, NULL},
	{"solver_add_callback", m_solver_add_callback, METH_VARARGS, NULL},
	{"solver_param", m_solver_param, METH_VARARGS, NULL},
	{"load_image", m_load_image, METH_VARARGS, NULL},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
	PyModuleDef_HEAD_INIT,
	.m_name = "caffe._caffe",
	.m_doc = "gocaffe's binding, under the Python package caffe.",
	.m_size = -1,
	.m_methods = methods,
};

PyMODINIT_FUNC PyInit__caffe(void) {
	if (PyType_Ready(&BlobBufferType) < 0) {
		return NULL;
	}
	PyObject *m = PyModule_Create(&moduledef);
	if (m == NULL) {
		return NULL;
	}
	Py_INCREF(&BlobBufferType);
	if (PyModule_AddObject(m, "BlobBuffer", (PyObject *)&BlobBufferType) < 0) {
		Py_DECREF(&BlobBufferType);
		Py_DECREF(m);
		return NULL;
	}
	if (PyModule_AddIntConstant(m, "embedded", gcEmbedded()) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}

// ---- Go calling Python ---------------------------------------------------------

int gc_py_initialized(void) { return Py_IsInitialized(); }

// fetch_error moves the Python exception being raised into *e, with its
// traceback formatted.
static void fetch_error(gc_pyerr *e) {
	PyObject *t, *v, *tb;
	PyErr_Fetch(&t, &v, &tb);
	PyErr_NormalizeException(&t, &v, &tb);
	if (tb != NULL && v != NULL) {
		PyException_SetTraceback(v, tb);
	}
	e->type = t;
	e->value = v;
	e->tb = tb;
	e->text = NULL;
	e->summary = NULL;
	PyObject *mod = PyImport_ImportModule("traceback");
	if (mod != NULL) {
		PyObject *lines = PyObject_CallMethod(mod, "format_exception", "OOO", t ? t : Py_None, v ? v : Py_None, tb ? tb : Py_None);
		PyObject *only = PyObject_CallMethod(mod, "format_exception_only", "OO", t ? t : Py_None, v ? v : Py_None);
		PyObject *empty = PyUnicode_FromString("");
		if (lines != NULL && empty != NULL) {
			PyObject *joined = PyUnicode_Join(empty, lines);
			const char *u = joined != NULL ? PyUnicode_AsUTF8(joined) : NULL;
			if (u != NULL) {
				e->text = strdup(u);
			}
			Py_XDECREF(joined);
		}
		if (only != NULL && empty != NULL) {
			PyObject *joined = PyUnicode_Join(empty, only);
			const char *u = joined != NULL ? PyUnicode_AsUTF8(joined) : NULL;
			if (u != NULL) {
				e->summary = strdup(u);
			}
			Py_XDECREF(joined);
		}
		Py_XDECREF(lines);
		Py_XDECREF(only);
		Py_XDECREF(empty);
		Py_DECREF(mod);
	}
	PyErr_Clear();
	if (e->summary == NULL) {
		e->summary = strdup("a Python exception (it could not be formatted)");
	}
}

// bridge returns a function of the Python module caffe._bridge (borrowed,
// kept for the process), importing it once.
static PyObject *bridge(const char *name) {
	static PyObject *mod;
	if (mod == NULL) {
		mod = PyImport_ImportModule("caffe._bridge");
		if (mod == NULL) {
			return NULL;
		}
	}
	return PyObject_GetAttrString(mod, name);
}

PyObject *gc_make_layer(const char *module, const char *cls, const char *param, Py_ssize_t nparam,
	const char *param_str, int phase, uintptr_t layer, gc_pyerr *e) {
	PyGILState_STATE st = PyGILState_Ensure();
	PyObject *obj = NULL;
	PyObject *cap = wrap(layer); // owns the handle from here, or released it
	PyObject *f = cap != NULL ? bridge("make_layer") : NULL;
	if (f != NULL) {
		obj = PyObject_CallFunction(f, "ssy#siO", module, cls, param, nparam, param_str, phase, cap);
	}
	Py_XDECREF(f);
	Py_XDECREF(cap);
	if (obj == NULL) {
		fetch_error(e);
	}
	PyGILState_Release(st);
	return obj;
}

// capsules returns a list of capsules of the handles, which it owns
// whatever happens: on failure they are released.
static PyObject *capsules(uintptr_t *hs, int n) {
	PyObject *list = PyList_New(n);
	if (list == NULL) {
		for (int i = 0; i < n; i++) {
			gcRelease(hs[i]);
		}
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		PyObject *c = wrap(hs[i]);
		if (c == NULL) {
			for (int j = i + 1; j < n; j++) {
				gcRelease(hs[j]);
			}
			Py_DECREF(list);
			return NULL;
		}
		PyList_SET_ITEM(list, i, c);
	}
	return list;
}

int gc_layer_call(PyObject *obj, const char *method, uintptr_t *bottoms, int nb, uintptr_t *tops, int nt,
	const unsigned char *prop, int np, gc_pyerr *e) {
	PyGILState_STATE st = PyGILState_Ensure();
	int rc = -1;
	PyObject *b = capsules(bottoms, nb);
	PyObject *t = capsules(tops, nt);
	PyObject *p = PyList_New(np);
	for (int i = 0; p != NULL && i < np; i++) {
		PyObject *v = prop[i] ? Py_True : Py_False;
		Py_INCREF(v);
		PyList_SET_ITEM(p, i, v);
	}
	PyObject *f = bridge("call");
	if (b != NULL && t != NULL && p != NULL && f != NULL) {
		PyObject *r = PyObject_CallFunction(f, "OsOOO", obj, method, b, t, p);
		if (r != NULL) {
			rc = 0;
			Py_DECREF(r);
		}
	}
	Py_XDECREF(f);
	Py_XDECREF(b);
	Py_XDECREF(t);
	Py_XDECREF(p);
	if (rc != 0) {
		fetch_error(e);
	}
	PyGILState_Release(st);
	return rc;
}

int gc_call0(PyObject *fn, gc_pyerr *e) {
	PyGILState_STATE st = PyGILState_Ensure();
	int rc = 0;
	PyObject *r = PyObject_CallNoArgs(fn);
	if (r == NULL) {
		fetch_error(e);
		rc = -1;
	}
	Py_XDECREF(r);
	PyGILState_Release(st);
	return rc;
}

void gc_decref(PyObject *o) {
	if (o == NULL) {
		return;
	}
	PyGILState_STATE st = PyGILState_Ensure();
	Py_DECREF(o);
	PyGILState_Release(st);
}

void gc_incref(PyObject *o) {
	PyGILState_STATE st = PyGILState_Ensure();
	Py_INCREF(o);
	PyGILState_Release(st);
}

int gc_embed_start(char **err) {
	if (Py_IsInitialized()) {
		return 0;
	}
	// No signal handlers: the command's own (SIGINT, SIGHUP: stop or
	// snapshot, as Caffe's) stay in charge.
	Py_InitializeEx(0);
	PyObject *m = PyInit__caffe();
	int rc = -1;
	if (m != NULL) {
		PyObject *mods = PyImport_GetModuleDict();
		rc = PyDict_SetItemString(mods, "caffe._caffe", m);
		Py_DECREF(m);
	}
	if (rc != 0) {
		gc_pyerr e;
		fetch_error(&e);
		*err = e.text != NULL ? e.text : e.summary;
		Py_XDECREF(e.type);
		Py_XDECREF(e.value);
		Py_XDECREF(e.tb);
	}
	// The GIL goes back; every later call takes it (PyGILState_Ensure).
	PyEval_SaveThread();
	return rc;
}
