"""A loss layer written in Python, with the behaviour of the
EuclideanLossLayer of Caffe's pycaffe example (examples/pycaffe/layers):
half the mean over the batch of the squared distance between two bottoms.
The tests train nets with it from Python and from `gocaffe train`."""

import numpy as np

import caffe


class EuclideanLossLayer(caffe.Layer):
    def setup(self, bottom, top):
        if len(bottom) != 2:
            raise Exception('EuclideanLossLayer takes two bottoms (prediction, target), got %d' % len(bottom))

    def reshape(self, bottom, top):
        if bottom[0].count != bottom[1].count:
            raise Exception('the bottoms hold %d and %d values' % (bottom[0].count, bottom[1].count))
        self.delta = np.zeros_like(bottom[0].data, dtype=np.float32)
        top[0].reshape(1)

    def forward(self, bottom, top):
        self.delta[...] = bottom[0].data - bottom[1].data.reshape(bottom[0].data.shape)
        n = bottom[0].num
        top[0].data[...] = np.sum(self.delta ** 2) / n / 2.0

    def backward(self, top, propagate_down, bottom):
        n = bottom[0].num
        scale = top[0].diff[0] / n
        for i, sign in ((0, 1.0), (1, -1.0)):
            if propagate_down[i]:
                bottom[i].diff[...] = (sign * scale * self.delta).reshape(bottom[i].diff.shape)
