"""Layers written in Python inside gocaffe nets: a user's loss layer
(pyloss.EuclideanLossLayer) trains a net from Python and from `gocaffe
train` built with the python tag, and a Python data layer feeds a solver."""

import re
import unittest

import numpy as np

import caffe
from caffe import layers as L
from caffe.proto import caffe_pb2

import gctest


def regression_net(loss='python', batch=32, dim=8, seed=1):
    n = caffe.NetSpec()
    n.x, n.y = L.Python(ntop=2, python_param=dict(module='pydata', layer='RegressionData',
                                                 param_str='batch=%d;dim=%d;seed=%d' % (batch, dim, seed)))
    n.pred = L.InnerProduct(n.x, num_output=1, weight_filler=dict(type='gaussian', std=0.1),
                            bias_filler=dict(type='constant'))
    if loss == 'python':
        # A Python layer is a loss only with a loss_weight, as in Caffe.
        n.loss = L.Python(n.pred, n.y, loss_weight=1,
                          python_param=dict(module='pyloss', layer='EuclideanLossLayer'))
    else:
        n.loss = L.EuclideanLoss(n.pred, n.y)
    return n.to_proto()


def solver_text(net_file, max_iter, lr=0.05, **extra):
    s = caffe_pb2.SolverParameter()
    s.train_net = net_file
    s.base_lr = lr
    s.momentum = 0.9
    s.lr_policy = 'fixed'
    s.max_iter = max_iter
    s.display = 10
    s.snapshot_after_train = False
    s.type = 'SGD'
    for k, v in extra.items():
        setattr(s, k, v)
    return str(s)


class TestPythonLoss(gctest.TempDirTest):
    def solver(self, loss, max_iter=200):
        net = self.write('%s_net.prototxt' % loss, regression_net(loss))
        return caffe.SGDSolver(self.write('%s_solver.prototxt' % loss, solver_text(net, max_iter)))

    def test_trains_from_python(self):
        caffe.set_random_seed(7)
        s = self.solver('python')
        layer = s.net.layer_dict['loss']
        self.assertIsInstance(layer, caffe.Layer)
        self.assertEqual(layer.type, 'Python')
        s.net.forward()
        first = float(s.net.blobs['loss'].data)
        s.step(200)
        self.assertEqual(s.iter, 200)
        s.net.forward()
        last = float(s.net.blobs['loss'].data)
        self.assertLess(last, first / 100, 'loss %g after 200 iterations, %g before' % (last, first))
        truth = np.random.RandomState(1234).randn(8).astype(np.float32)
        np.testing.assert_allclose(s.net.params['pred'][0].data.ravel(), truth, atol=0.05)
        np.testing.assert_allclose(s.net.params['pred'][1].data, [0.5], atol=0.05)

    def test_same_as_the_go_loss(self):
        """The Python loss and gocaffe's EuclideanLoss train the same net
        to the same weights."""
        got = {}
        for loss in ('python', 'go'):
            caffe.set_random_seed(11)
            s = self.solver(loss)
            s.step(25)
            got[loss] = [p.data.copy() for p in s.net.params['pred']]
        for a, b in zip(got['python'], got['go']):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)

    def test_gocaffe_train(self):
        """`gocaffe train` built with the python tag runs both Python
        layers of the net (PYTHONPATH finds them and the caffe package)."""
        net = self.write('net.prototxt', regression_net('python'))
        solver = self.write('solver.prototxt', solver_text(net, 200))
        log = gctest.run_gocaffe(['train', '--solver', solver])
        losses = [float(v) for v in re.findall(r'Iteration \d+.*, loss = ([-+0-9.eE]+)', log)]
        self.assertGreaterEqual(len(losses), 10, log)
        self.assertLess(losses[-1], losses[0] / 100, log)


class TestPythonData(gctest.TempDirTest):
    def test_feeds_a_solver(self):
        caffe.set_random_seed(3)
        n = caffe.NetSpec()
        n.x, n.label = L.Python(ntop=2, python_param=dict(module='pydata', layer='ClassData',
                                                         param_str='batch=64;dim=8;seed=5'))
        n.score = L.InnerProduct(n.x, num_output=2, weight_filler=dict(type='xavier'))
        n.loss = L.SoftmaxWithLoss(n.score, n.label)
        n.accuracy = L.Accuracy(n.score, n.label)
        net = self.write('net.prototxt', n.to_proto())
        s = caffe.SGDSolver(self.write('solver.prototxt', solver_text(net, 300, lr=0.1)))
        seen = []
        # The data layer writes a new batch at every iteration.
        s.add_callback(lambda: seen.append(s.net.blobs['x'].data.sum()), None)
        s.step(300)
        self.assertEqual(len(seen), 300)
        self.assertEqual(len(set(seen[1:])), 299, 'the batches did not change')
        acc = np.mean([s.net.forward()['accuracy'] for _ in range(10)])
        self.assertGreater(acc, 0.95)


if __name__ == '__main__':
    unittest.main()
