"""Nets, blobs, solvers and Python layers: pycaffe's classes on gocaffe.

Everything here is a thin layer over the extension module caffe._caffe
(package pycaffe in Go). A Blob's .data and .diff are numpy arrays over the
blob's own host memory, so writing them changes what the net computes, and
reading them after a forward pass reads what it wrote, with no copy.
"""

import json
import os
import warnings
from collections import OrderedDict

import numpy as np

from . import _caffe

# The phases of caffe.proto's Phase enum.
TRAIN = 0
TEST = 1


def _path(p):
    """A file name argument as str (str, bytes or os.PathLike)."""
    return os.fsdecode(os.fspath(p))


class Blob(object):
    """A gocaffe blob: an N-d array of float32 data and its gradient, diff.

    .data and .diff are numpy arrays viewing the blob's memory; a reshape
    gives them the new shape at the next access.
    """

    __slots__ = ('_h', '_keep')

    def __init__(self, handle, keep=None):
        self._h = handle
        self._keep = keep  # what must outlive the blob (its net)

    @property
    def data(self):
        return np.asarray(_caffe.blob_view(self._h, 0, self))

    @property
    def diff(self):
        return np.asarray(_caffe.blob_view(self._h, 1, self))

    @property
    def shape(self):
        return _caffe.blob_shape(self._h)

    @property
    def count(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def _legacy(self, axis):
        shape = self.shape
        if len(shape) > 4:
            raise ValueError('a blob of %d axes has no num/channels/height/width: use .shape' % len(shape))
        # Caffe's LegacyShape: the axes a blob lacks (at the end) are 1.
        return shape[axis] if axis < len(shape) else 1

    num = property(lambda self: self._legacy(0))
    channels = property(lambda self: self._legacy(1))
    height = property(lambda self: self._legacy(2))
    width = property(lambda self: self._legacy(3))

    def reshape(self, *shape):
        """reshape(d0, d1, ...): the blob's new shape (its memory grows as needed)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        _caffe.blob_reshape(self._h, [int(d) for d in shape])

    def __repr__(self):
        return 'caffe.Blob(shape=%r)' % (self.shape,)


class _LayerBlobs(list):
    """A Python layer's learnable blobs (self.blobs): a list of Blob that
    add_blob extends."""

    def __init__(self, handle, keep=None):
        self._h = handle
        super(_LayerBlobs, self).__init__(Blob(b, keep) for b in _caffe.layer_blobs(handle))

    def add_blob(self, *shape):
        """add_blob(d0, d1, ...): adds a learnable blob of that shape, filled with zeros."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        b = Blob(_caffe.layer_add_blob(self._h, [int(d) for d in shape]))
        self.append(b)
        return b


class Layer(object):
    """The base class of layers written in Python (type: "Python").

    A prototxt names the class with python_param { module: "..." layer:
    "..." param_str: "..." }; the net makes one object per layer and calls
    setup(bottom, top) once, then reshape(bottom, top) and forward(bottom,
    top) at every forward pass and backward(top, propagate_down, bottom) at
    every backward pass, with lists of Blob. The object has param_str (a
    str), phase (caffe.TRAIN or caffe.TEST) and blobs (its learnable blobs,
    saved with the net's weights; self.blobs.add_blob(shape) adds one).
    """

    def __init__(self, param=None):
        self.layer_param = param
        self.param_str = ''
        self.phase = TRAIN
        self._gc_handle = None

    @property
    def type(self):
        return 'Python'

    @property
    def blobs(self):
        h = self.__dict__.get('_gc_handle')
        if h is None:
            return _LayerBlobs.__new__(_LayerBlobs)
        return _LayerBlobs(h)

    def setup(self, bottom, top):
        pass

    def reshape(self, bottom, top):
        pass

    def forward(self, bottom, top):
        pass

    def backward(self, top, propagate_down, bottom):
        pass


class _GoLayer(object):
    """A layer of a net that runs in Go: its type and learnable blobs."""

    __slots__ = ('_net', '_index', 'type', 'name')

    def __init__(self, net, index, name, type_):
        self._net, self._index, self.name, self.type = net, index, name, type_

    @property
    def blobs(self):
        return [Blob(b, self._net) for b in _caffe.net_layer_blobs(self._net._h, self._index)]

    def __repr__(self):
        return 'caffe.Layer(name=%r, type=%r)' % (self.name, self.type)


def _phase_arg(phase):
    if phase not in (TRAIN, TEST):
        raise ValueError('phase must be caffe.TRAIN or caffe.TEST, not %r' % (phase,))
    return int(phase)


class Net(object):
    """A gocaffe net built from a prototxt.

    Net(network_file, phase, weights=None, level=0, stages=()) and the
    older Net(network_file, weights, phase) build it, the latter with a
    DeprecationWarning as Caffe gives. blobs and params are ordered
    dictionaries of Blob (params: per layer, the list of its learnable
    blobs), whose .data and .diff view the net's memory.
    """

    def __init__(self, network_file, *args, **kwargs):
        phase = kwargs.pop('phase', None)
        weights = kwargs.pop('weights', None)
        level = int(kwargs.pop('level', 0))
        stages = kwargs.pop('stages', None) or ()
        if kwargs:
            raise TypeError('Net() got unexpected keyword arguments: %s' % ', '.join(sorted(kwargs)))
        args = list(args)
        if args and isinstance(args[0], (str, bytes, os.PathLike)):
            # Net(file, weights, phase): Caffe's older form.
            warnings.warn('Net(network_file, weights, phase) is deprecated: use '
                          'Net(network_file, phase, weights=weights)', DeprecationWarning, stacklevel=2)
            if weights is not None:
                raise TypeError('Net() got the weights twice')
            weights = args.pop(0)
        if args:
            if phase is not None:
                raise TypeError('Net() got the phase twice')
            phase = args.pop(0)
        if args:
            raise TypeError('Net() takes a file, a phase and keyword arguments; got %d more' % len(args))
        if phase is None:
            raise TypeError('Net() needs a phase: caffe.TRAIN or caffe.TEST')
        if isinstance(stages, str):
            stages = [stages]
        for s in stages:
            if '\n' in s:
                raise ValueError('a stage has no newline: %r' % (s,))
        h = _caffe.net_new(_path(network_file), _phase_arg(phase), level, '\n'.join(stages),
                           _path(weights) if weights is not None else '')
        self._init(h, None)

    @classmethod
    def _wrap(cls, handle, keep):
        n = cls.__new__(cls)
        n._init(handle, keep)
        return n

    def _init(self, handle, keep):
        self._h = handle
        self._keep = keep  # a solver's net holds its solver
        info = json.loads(_caffe.net_info(handle))
        self.name = info['name']
        self._blob_names = list(info['blobs'])
        self._layer_names = [l['name'] for l in info['layers']]
        self._layer_types = [l['type'] for l in info['layers']]
        self._inputs = list(info['inputs'])
        self._outputs = list(info['outputs'])
        self._layer_info = info['layers']
        self._blob_loss_weights = list(info.get('loss_weights') or [0.0] * len(self._blob_names))
        layers = []
        for i, l in enumerate(info['layers']):
            obj = _caffe.net_layer_object(handle, i) if l['python'] else None
            layers.append(obj if obj is not None else _GoLayer(self, i, l['name'], l['type']))
        self._layers = layers

    # ---- structure -----------------------------------------------------

    @property
    def layers(self):
        return list(self._layers)

    @property
    def blobs(self):
        """The net's blobs by name, in order (splits included, as Caffe's)."""
        return OrderedDict((name, Blob(_caffe.net_blob(self._h, i), self))
                           for i, name in enumerate(self._blob_names))

    @property
    def params(self):
        """The learnable blobs of each layer that has any, by layer name."""
        out = OrderedDict()
        for name, l in zip(self._layer_names, self._layers):
            bs = list(l.blobs)
            if bs:
                out[name] = bs
        return out

    @property
    def blob_loss_weights(self):
        """Each blob's weight in the net's loss (0 for blobs that are no
        loss), by name."""
        return OrderedDict(zip(self._blob_names, self._blob_loss_weights))

    @property
    def layer_dict(self):
        return OrderedDict(zip(self._layer_names, self._layers))

    @property
    def inputs(self):
        return [self._blob_names[i] for i in self._inputs]

    @property
    def outputs(self):
        return [self._blob_names[i] for i in self._outputs]

    @property
    def top_names(self):
        return OrderedDict((l['name'], [self._blob_names[i] for i in l['tops']]) for l in self._layer_info)

    @property
    def bottom_names(self):
        return OrderedDict((l['name'], [self._blob_names[i] for i in l['bottoms']]) for l in self._layer_info)

    def _layer_index(self, name):
        try:
            return self._layer_names.index(name)
        except ValueError:
            raise ValueError('net %r has no layer %r' % (self.name, name))

    # ---- passes --------------------------------------------------------

    def _forward(self, start, end):
        return _caffe.net_forward(self._h, start, end)

    def _backward(self, start, end):
        _caffe.net_backward(self._h, start, end)

    def forward(self, blobs=None, start=None, end=None, **kwargs):
        """Runs the layers from start to end (names; all by default), after
        copying the keyword arguments (arrays by input name) into the
        inputs. Returns a dict of the outputs' data, or of end's tops, and
        of the blobs named in blobs.
        """
        blobs = list(blobs or [])
        first = self._layer_index(start) if start is not None else 0
        if end is not None:
            last = self._layer_index(end)
            wanted = set(self.top_names[end]) | set(blobs)
        else:
            last = len(self._layers) - 1
            wanted = set(self.outputs) | set(blobs)
        if kwargs:
            self._set_inputs(kwargs, 'data')
        if self._layers:
            self._forward(first, last)
        all_blobs = self.blobs
        return {name: all_blobs[name].data for name in wanted}

    def backward(self, diffs=None, start=None, end=None, **kwargs):
        """Runs the backward pass from start down to end (names; all by
        default), after copying the keyword arguments (arrays by output
        name) into the outputs' diffs. Returns a dict of the inputs' diffs,
        or of end's bottoms, and of the blobs named in diffs.
        """
        diffs = list(diffs or [])
        first = self._layer_index(start) if start is not None else len(self._layers) - 1
        if end is not None:
            last = self._layer_index(end)
            wanted = set(self.bottom_names[end]) | set(diffs)
        else:
            last = 0
            wanted = set(self.inputs) | set(diffs)
        if kwargs:
            if set(kwargs) != set(self.outputs):
                raise ValueError('the diffs given (%s) are not the outputs of the net (%s)'
                                 % (sorted(kwargs), self.outputs))
            all_blobs = self.blobs
            for name, arr in kwargs.items():
                b = all_blobs[name]
                if np.shape(arr)[0] != b.shape[0]:
                    raise ValueError('diff %r has %d items, the blob a batch of %d'
                                     % (name, np.shape(arr)[0], b.shape[0]))
                b.diff[...] = arr
        if self._layers:
            self._backward(first, last)
        all_blobs = self.blobs
        return {name: all_blobs[name].diff for name in wanted}

    def _set_inputs(self, arrays, what):
        if set(arrays) != set(self.inputs):
            raise ValueError('the arrays given (%s) are not the inputs of the net (%s)'
                             % (sorted(arrays), self.inputs))
        all_blobs = self.blobs
        for name, arr in arrays.items():
            b = all_blobs[name]
            if np.shape(arr)[0] != b.shape[0]:
                raise ValueError('input %r has %d items, the blob a batch of %d'
                                 % (name, np.shape(arr)[0], b.shape[0]))
            getattr(b, what)[...] = arr

    def _batches(self, arrays):
        """Splits arrays (by blob name) into batches of the net's batch
        size, padding the last with zeros. Yields (batch, pad)."""
        num = len(next(iter(arrays.values())))
        size = self.blobs[next(iter(arrays))].shape[0]
        for start in range(0, num, size):
            batch = {}
            pad = 0
            for name, arr in arrays.items():
                part = np.asarray(arr[start:start + size])
                pad = size - len(part)
                if pad:
                    part = np.concatenate([part, np.zeros((pad,) + part.shape[1:], part.dtype)])
                batch[name] = part
            yield batch, pad

    def forward_all(self, blobs=None, **kwargs):
        """forward over as many batches as the inputs hold; returns the
        outputs (and blobs) of all items, as arrays."""
        outs = {name: [] for name in set(self.outputs) | set(blobs or [])}
        if not kwargs:
            for name, arr in self.forward(blobs=blobs).items():
                outs[name].append(arr.copy())
        else:
            for batch, pad in self._batches(kwargs):
                got = self.forward(blobs=blobs, **batch)
                for name, arr in got.items():
                    outs[name].append(arr[:len(arr) - pad].copy())
        return {name: np.concatenate(parts) if parts else np.zeros(0, np.float32)
                for name, parts in outs.items()}

    def forward_backward_all(self, blobs=None, diffs=None, **kwargs):
        """forward and backward over as many batches as the arguments hold
        (inputs' data and outputs' diffs); returns (outputs, diffs)."""
        fw_args = {k: v for k, v in kwargs.items() if k in self.inputs}
        bw_args = {k: v for k, v in kwargs.items() if k in self.outputs}
        outs = {name: [] for name in set(self.outputs) | set(blobs or [])}
        douts = {name: [] for name in set(self.inputs) | set(diffs or [])}
        fw_batches = list(self._batches(fw_args)) if fw_args else [({}, 0)]
        bw_batches = list(self._batches(bw_args)) if bw_args else [({}, 0)] * len(fw_batches)
        for (fb, pad), (bb, _) in zip(fw_batches, bw_batches):
            got = self.forward(blobs=blobs, **fb)
            back = self.backward(diffs=diffs, **bb)
            for name, arr in got.items():
                outs[name].append(arr[:len(arr) - pad].copy())
            for name, arr in back.items():
                douts[name].append(arr[:len(arr) - pad].copy())
        cat = lambda d: {k: np.concatenate(v) for k, v in d.items() if v}
        return cat(outs), cat(douts)

    def reshape(self):
        """Reshapes every layer to its bottoms (after an input's reshape)."""
        _caffe.net_reshape(self._h)

    def clear_param_diffs(self):
        _caffe.net_clear_param_diffs(self._h)

    def set_input_arrays(self, data, labels):
        """Feeds a MemoryData layer (the net's first layer) with data
        (N, C, H, W) and labels (N), float32; N a multiple of its batch."""
        if not self._layers or self._layer_types[0] != 'MemoryData':
            raise RuntimeError('set_input_arrays feeds a MemoryData layer, and the first layer of %r is not one'
                               % self.name)
        data = np.ascontiguousarray(data, dtype=np.float32)
        labels = np.ascontiguousarray(labels, dtype=np.float32)
        if data.ndim != 4:
            raise ValueError('data must have 4 axes (N, C, H, W), not %d' % data.ndim)
        if labels.ndim == 1:
            labels = labels.reshape(-1, 1, 1, 1)
        if labels.shape[0] != data.shape[0]:
            raise ValueError('%d items of data and %d labels' % (data.shape[0], labels.shape[0]))
        self._input_arrays = (data, labels)
        _caffe.net_set_input_arrays(self._h, data, labels, 0)

    # ---- weights -------------------------------------------------------

    def copy_from(self, filename):
        """Copies the weights of the layers of the same names from a
        .caffemodel (or .h5) file."""
        _caffe.net_copy_from(self._h, _path(filename))

    def share_with(self, other):
        """Shares other's learnable blobs with the layers of the same names."""
        _caffe.net_share_with(self._h, other._h)

    def save(self, filename):
        """Writes the weights as a .caffemodel (binary NetParameter)."""
        _caffe.net_save(self._h, _path(filename))

    def save_hdf5(self, filename):
        _caffe.net_save_hdf5(self._h, _path(filename))

    def load_hdf5(self, filename):
        _caffe.net_load_hdf5(self._h, _path(filename))

    def __repr__(self):
        return 'caffe.Net(%r, %d layers)' % (self.name, len(self._layers))


# ---- solvers -----------------------------------------------------------------


class Solver(object):
    """A gocaffe solver made from a solver prototxt: net is its train net,
    test_nets its test nets, both Net objects over the solver's own nets."""

    _type = ''

    def __init__(self, filename):
        self._h = _caffe.solver_new(_path(filename), self._type)
        self._init_nets()

    def _init_nets(self):
        nets = _caffe.solver_nets(self._h)
        # A solver's nets hold the solver's handle (not the Solver object,
        # so no cycle): they outlive it, as in Caffe.
        self.net = Net._wrap(nets[0], self._h)
        self.test_nets = [Net._wrap(h, self._h) for h in nets[1:]]

    @property
    def iter(self):
        return _caffe.solver_iter(self._h)

    @property
    def param(self):
        from .proto import caffe_pb2
        p = caffe_pb2.SolverParameter()
        p.ParseFromString(_caffe.solver_param(self._h))
        return p

    def step(self, iters):
        """Trains iters iterations."""
        _caffe.solver_step(self._h, int(iters))

    def solve(self, resume_file=None):
        """Trains to max_iter, from a .solverstate if one is given."""
        _caffe.solver_solve(self._h, _path(resume_file) if resume_file else '')

    def restore(self, filename):
        _caffe.solver_restore(self._h, _path(filename))

    def snapshot(self):
        """Writes the weights and the solver state at the current iteration
        (snapshot_prefix, snapshot_format); returns the two file names."""
        return _caffe.solver_snapshot(self._h)

    def apply_update(self):
        """One update from the gradients in the train net's diffs."""
        _caffe.solver_apply_update(self._h)

    def add_callback(self, on_start, on_gradients_ready):
        """Calls on_start() at the start of every iteration and
        on_gradients_ready() once its gradients are computed, before the
        update (either may be None)."""
        _caffe.solver_add_callback(self._h, on_start, on_gradients_ready)

    def share_weights(self, net):
        """net shares the train net's learnable blobs."""
        net.share_with(self.net)


class SGDSolver(Solver):
    _type = 'SGD'


class NesterovSolver(Solver):
    _type = 'Nesterov'


class AdaGradSolver(Solver):
    _type = 'AdaGrad'


class RMSPropSolver(Solver):
    _type = 'RMSProp'


class AdaDeltaSolver(Solver):
    _type = 'AdaDelta'


class AdamSolver(Solver):
    _type = 'Adam'


_SOLVERS = {c._type: c for c in (SGDSolver, NesterovSolver, AdaGradSolver, RMSPropSolver, AdaDeltaSolver, AdamSolver)}


def get_solver(filename):
    """The solver of the type its file names (type, or the older
    solver_type; SGD by default)."""
    s = Solver(filename)
    cls = _SOLVERS.get(s.param.type)
    if cls is not None:
        s.__class__ = cls
    return s
