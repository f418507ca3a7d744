"""The LeNet flow of Caffe's learning notebook (examples/01-learning-lenet)
as a script, on Fashion-MNIST: net_spec writes the train and test nets,
SGDSolver trains from LMDB (made by `gocaffe convert_mnist_data` from the
IDX files), and the blobs and params are read as numpy arrays in between,
as the notebook does. test_lenet.py runs it on the CPU, gpu_lenet.py with
caffe.set_mode_gpu().

    python3 python/test/lenet.py --gocaffe bin/gocaffe [--gpu] [--iters N]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import caffe
from caffe import layers as L, params as P
from caffe.proto import caffe_pb2

IDX = os.environ.get('GOCAFFE_FASHION_MNIST', '/usr/share/datasets/fashion-mnist')


def lenet(lmdb, batch_size):
    n = caffe.NetSpec()
    n.data, n.label = L.Data(batch_size=batch_size, backend=P.Data.LMDB, source=lmdb,
                             transform_param=dict(scale=1. / 255), ntop=2)
    n.conv1 = L.Convolution(n.data, kernel_size=5, num_output=20, weight_filler=dict(type='xavier'))
    n.pool1 = L.Pooling(n.conv1, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.conv2 = L.Convolution(n.pool1, kernel_size=5, num_output=50, weight_filler=dict(type='xavier'))
    n.pool2 = L.Pooling(n.conv2, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.fc1 = L.InnerProduct(n.pool2, num_output=500, weight_filler=dict(type='xavier'))
    n.relu1 = L.ReLU(n.fc1, in_place=True)
    n.score = L.InnerProduct(n.relu1, num_output=10, weight_filler=dict(type='xavier'))
    n.loss = L.SoftmaxWithLoss(n.score, n.label)
    return n.to_proto()


def make_lmdb(gocaffe, workdir):
    """The train and test LMDBs of Fashion-MNIST, made by gocaffe's
    converter (once per workdir)."""
    out = {}
    for split, prefix in (('train', 'train'), ('test', 't10k')):
        db = os.path.join(workdir, 'fashion_%s_lmdb' % split)
        if not os.path.exists(db):
            subprocess.check_call([gocaffe, 'convert_mnist_data', idx_file('%s-images-idx3-ubyte' % prefix),
                                   idx_file('%s-labels-idx1-ubyte' % prefix), db])
        out[split] = db
    return out


def idx_file(name):
    """An IDX file of the Fashion-MNIST folder, gzipped or plain."""
    for candidate in (name + '.gz', name):
        path = os.path.join(IDX, candidate)
        if os.path.exists(path):
            return path
    raise IOError('no %s(.gz) in %s (set GOCAFFE_FASHION_MNIST to the folder of the IDX files)' % (name, IDX))


def write_files(workdir, dbs, max_iter):
    train = os.path.join(workdir, 'lenet_auto_train.prototxt')
    test = os.path.join(workdir, 'lenet_auto_test.prototxt')
    with open(train, 'w') as f:
        f.write(str(lenet(dbs['train'], 64)))
    with open(test, 'w') as f:
        f.write(str(lenet(dbs['test'], 100)))
    s = caffe_pb2.SolverParameter()
    s.train_net = train
    s.test_net.append(test)
    s.test_interval = 500
    s.test_iter.append(100)
    s.base_lr = 0.01
    s.momentum = 0.9
    s.weight_decay = 5e-4
    s.lr_policy = 'inv'
    s.gamma = 1e-4
    s.power = 0.75
    s.display = 100
    s.max_iter = max_iter
    s.snapshot = 5000
    s.snapshot_prefix = os.path.join(workdir, 'lenet')
    solver = os.path.join(workdir, 'lenet_auto_solver.prototxt')
    with open(solver, 'w') as f:
        f.write(str(s))
    return solver


def test_accuracy(net, batches=100):
    """The share of the test set (batches of 100) the net gets right,
    counted from the score and label blobs as the notebook does."""
    correct = 0
    total = 0
    for _ in range(batches):
        net.forward()
        score = net.blobs['score'].data
        label = net.blobs['label'].data
        correct += int(np.sum(score.argmax(1) == label))
        total += len(label)
    return correct / float(total)


def run(gocaffe, workdir, niter=1500, test_interval=500, gpu=False, log=print):
    """Trains LeNet niter iterations; returns (train losses, test
    accuracies at every test_interval and at the end)."""
    if gpu:
        caffe.set_device(0)
        caffe.set_mode_gpu()
    else:
        caffe.set_mode_cpu()
    dbs = make_lmdb(gocaffe, workdir)
    solver = caffe.SGDSolver(write_files(workdir, dbs, niter))

    # Each output is (batch size, feature dim, spatial dim); the weights'
    # shapes, the biases omitted.
    shapes = [(k, v.data.shape) for k, v in solver.net.blobs.items()]
    log('blobs:', shapes)
    assert dict(shapes)['data'] == (64, 1, 28, 28) and dict(shapes)['score'] == (64, 10), shapes
    weights = [(k, v[0].data.shape) for k, v in solver.net.params.items()]
    log('params:', weights)
    assert weights == [('conv1', (20, 1, 5, 5)), ('conv2', (50, 20, 5, 5)),
                       ('fc1', (500, 800)), ('score', (10, 500))], weights

    solver.net.forward()
    solver.test_nets[0].forward()
    images = solver.net.blobs['data'].data[:8, 0]
    assert images.shape == (8, 28, 28) and 0 <= images.min() and images.max() <= 1, images.shape
    log('train labels:', solver.net.blobs['label'].data[:8])
    log('test labels:', solver.test_nets[0].blobs['label'].data[:8])

    solver.step(1)
    grad = solver.net.params['conv1'][0].diff[:, 0]
    assert grad.shape == (20, 5, 5) and np.abs(grad).sum() > 0, 'conv1 has no gradient after a step'

    train_loss = np.zeros(niter)
    test_acc = []
    output = np.zeros((niter, 8, 10))
    start = time.time()
    for it in range(niter):
        solver.step(1)
        train_loss[it] = solver.net.blobs['loss'].data
        # The output on the first test batch (from conv1: no new data).
        solver.test_nets[0].forward(start='conv1')
        output[it] = solver.test_nets[0].blobs['score'].data[:8]
        if it % test_interval == 0 or it == niter - 1:
            acc = test_accuracy(solver.test_nets[0])
            test_acc.append(acc)
            log('iteration %d: train loss %.4f, test accuracy %.4f (%.1f s)'
                % (it, train_loss[it], acc, time.time() - start))
    return train_loss, test_acc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--gocaffe', default=os.environ.get('GOCAFFE_BIN', 'gocaffe'),
                    help='the gocaffe command, for convert_mnist_data')
    ap.add_argument('--gpu', action='store_true', help='caffe.set_mode_gpu()')
    ap.add_argument('--iters', type=int, default=1500)
    ap.add_argument('--workdir', default=None)
    args = ap.parse_args()
    workdir = args.workdir or tempfile.mkdtemp(prefix='lenet-')
    loss, acc = run(args.gocaffe, workdir, niter=args.iters, gpu=args.gpu)
    print('final train loss %.4f, test accuracy %.4f' % (loss[-1], acc[-1]))
    return 0 if acc[-1] >= 0.85 else 1


if __name__ == '__main__':
    sys.exit(main())
