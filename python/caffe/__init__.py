"""caffe: Caffe's Python interface (pycaffe) on gocaffe.

Build it with python/build, then put the python/ folder on PYTHONPATH:

    import caffe
    net = caffe.Net('deploy.prototxt', caffe.TEST, weights='model.caffemodel')
    net.blobs['data'].data[...] = image
    prob = net.forward()['prob']

Nets, blobs (numpy views of gocaffe's memory), the solvers, layers written
in Python (caffe.Layer), caffe.io, caffe.net_spec, caffe.draw,
caffe.coord_map, caffe.proto.caffe_pb2, Classifier and Detector behave as
Caffe's do. docs/python.md in the repository is the guide.
"""

from . import _caffe
from .pycaffe import (Net, Blob, Layer, Solver, SGDSolver, NesterovSolver, AdaGradSolver,
                      RMSPropSolver, AdaDeltaSolver, AdamSolver, get_solver, TRAIN, TEST)
from .net_spec import layers, params, NetSpec, to_proto
from .classifier import Classifier
from .detector import Detector
from . import io

__version__ = '1.0.0'


def set_mode_cpu():
    """Nets and solvers made from now on run on the CPU."""
    _caffe.set_mode(False)


def set_mode_gpu():
    """Nets and solvers made from now on run on the GPU set_device chose
    (0 by default); a module built without -tags cuda raises here."""
    _caffe.set_mode(True)


def set_device(device_id):
    """The GPU of GPU mode."""
    _caffe.set_device(int(device_id))


def set_random_seed(seed):
    """Seeds the fillers, dropout and data shuffling of the nets and
    solvers made from now on: the same seed, the same nets."""
    _caffe.set_random_seed(int(seed))


def layer_type_list():
    """The layer types gocaffe knows, sorted."""
    return sorted(t for t in _caffe.layer_type_list().split('\n') if t)


def init_log(level=0, stderr=True):
    """Shows gocaffe's log lines from level on (glog's 0 INFO, 1 WARNING,
    2 ERROR) on stderr; warnings and errors are shown by default."""
    _caffe.set_log_level(int(level) if stderr else 3)


def log(msg):
    """Writes msg as an INFO line in Caffe's log format."""
    _caffe.log(str(msg), 0)


# One process trains with one solver here: gocaffe's data-parallel
# training is the gocaffe command's (-gpu all, mpirun), not Python's.
def solver_count():
    return 1


def solver_rank():
    return 0


def set_solver_count(count):
    if int(count) != 1:
        raise RuntimeError('gocaffe trains in parallel from the gocaffe command (-gpu), not from Python')


def set_solver_rank(rank):
    if int(rank) != 0:
        raise RuntimeError('gocaffe trains in parallel from the gocaffe command (-gpu), not from Python')


def set_multiprocess(multiprocess):
    pass


def has_nccl():
    return False
