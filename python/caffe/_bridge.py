"""What gocaffe calls when a net runs a layer written in Python (package
pycaffe's pyLayer): make_layer makes the object of the class a prototxt
names, call runs one of its methods on the layer's blobs. Not for users.
"""

import importlib

from . import pycaffe


def make_layer(module, cls, param, param_str, phase, handle):
    """The object of class cls of module (imported from sys.path, which
    PYTHONPATH extends), made as Caffe's PythonLayer makes it: constructed
    with the LayerParameter, then given param_str, phase and, through
    handle, its learnable blobs."""
    mod = importlib.import_module(module)
    try:
        klass = getattr(mod, cls)
    except AttributeError:
        raise AttributeError('module %r (%s) has no class %r' % (module, getattr(mod, '__file__', '?'), cls))
    layer_param = None
    try:
        from .proto import caffe_pb2
        layer_param = caffe_pb2.LayerParameter()
        layer_param.ParseFromString(param)
    except ImportError:
        pass
    try:
        obj = klass(layer_param)
    except TypeError:
        obj = klass()
    obj.param_str = param_str
    obj.phase = phase
    obj._gc_handle = handle
    return obj


def call(obj, method, bottoms, tops, propagate_down):
    """Calls obj's method with Blob objects of the capsules given: setup,
    reshape and forward as (bottom, top), backward as (top,
    propagate_down, bottom)."""
    bottom = [pycaffe.Blob(h) for h in bottoms]
    top = [pycaffe.Blob(h) for h in tops]
    if method == 'backward':
        obj.backward(top, list(propagate_down), bottom)
    else:
        getattr(obj, method)(bottom, top)
