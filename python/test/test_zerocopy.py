"""Blobs' .data and .diff are numpy views of gocaffe's memory: writing
them changes what the net computes, and the net's results appear in them
without a copy."""

import unittest

import numpy as np

import caffe
from caffe import layers as L

import gctest


def linear_net(batch=4, dim=6, out=3):
    n = caffe.NetSpec()
    n.data = L.Input(shape=dict(dim=[batch, dim]))
    n.ip = L.InnerProduct(n.data, num_output=out, weight_filler=dict(type='gaussian', std=1),
                          bias_filler=dict(type='constant', value=0.25))
    n.prob = L.Softmax(n.ip)
    return n.to_proto()


class TestZeroCopy(gctest.TempDirTest):
    def setUp(self):
        super(TestZeroCopy, self).setUp()
        self.net = caffe.Net(self.write('net.prototxt', linear_net()), caffe.TEST)

    def expected(self, x):
        w, b = self.net.params['ip'][0].data, self.net.params['ip'][1].data
        ip = x.dot(w.T) + b
        e = np.exp(ip - ip.max(axis=1, keepdims=True))
        return ip, e / e.sum(axis=1, keepdims=True)

    def test_writing_data_changes_the_result(self):
        data = self.net.blobs['data'].data  # one view, kept
        self.assertEqual(data.dtype, np.float32)
        self.assertEqual(data.shape, (4, 6))
        rng = np.random.RandomState(0)
        for _ in range(3):
            x = rng.randn(4, 6).astype(np.float32)
            data[...] = x  # through the kept view: no call into the net
            prob = self.net.forward()['prob']
            ip, p = self.expected(x)
            np.testing.assert_allclose(self.net.blobs['ip'].data, ip, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(prob, p, rtol=1e-5, atol=1e-6)

    def test_views_share_memory(self):
        a = self.net.blobs['data'].data
        b = self.net.blobs['data'].data
        self.assertTrue(np.shares_memory(a, b))
        self.assertFalse(a.flags['OWNDATA'])
        # The array forward returns is the blob's memory too.
        out = self.net.forward()['prob']
        self.assertTrue(np.shares_memory(out, self.net.blobs['prob'].data))
        # Writing the weights through params writes the net's weights.
        self.net.params['ip'][0].data[...] = 0
        self.net.params['ip'][1].data[...] = [1, 2, 3]
        self.net.forward()
        np.testing.assert_array_equal(self.net.blobs['ip'].data, np.tile([1, 2, 3], (4, 1)))

    def test_diff_views(self):
        # A backward pass writes the diffs the views show.
        n = caffe.NetSpec()
        n.data = L.Input(shape=dict(dim=[2, 5]))
        n.ip = L.InnerProduct(n.data, num_output=1, weight_filler=dict(type='constant', value=2),
                              bias_filler=dict(type='constant'))
        net = caffe.Net(self.write('fb.prototxt', 'force_backward: true\n' + str(n.to_proto())), caffe.TRAIN)
        top = net.blobs['ip'].diff
        top[...] = 1
        net.backward()
        np.testing.assert_array_equal(net.blobs['data'].diff, np.full((2, 5), 2, np.float32))

    def test_reshape(self):
        self.net.blobs['data'].reshape(2, 6)
        self.net.reshape()
        self.assertEqual(self.net.blobs['data'].data.shape, (2, 6))
        self.assertEqual(self.net.blobs['prob'].data.shape, (2, 3))
        x = np.ones((2, 6), np.float32)
        out = self.net.forward(data=x)['prob']
        np.testing.assert_allclose(out, self.expected(x)[1], rtol=1e-5)

    def test_views_outlive_the_net(self):
        view = self.net.blobs['prob'].data
        w = self.net.params['ip'][0].data
        self.net.forward()
        before = view.copy()
        del self.net
        import gc
        gc.collect()
        np.testing.assert_array_equal(view, before)
        self.assertEqual(w.shape, (3, 6))


if __name__ == '__main__':
    unittest.main()
