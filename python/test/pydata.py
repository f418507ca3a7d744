"""Data layers written in Python, for the tests: each forward pass writes a
fresh batch into its tops, as a user's data layer does.

param_str is a YAML-free "key=value;key=value" string: batch (items),
dim (features), seed."""

import numpy as np

import caffe


def _params(param_str):
    out = {}
    for part in param_str.split(';'):
        if part.strip():
            k, v = part.split('=')
            out[k.strip()] = int(v)
    return out


class _Batches(caffe.Layer):
    def setup(self, bottom, top):
        if bottom:
            raise Exception('a data layer takes no bottoms')
        p = _params(self.param_str)
        self.batch = p.get('batch', 32)
        self.dim = p.get('dim', 8)
        self.rng = np.random.RandomState(p.get('seed', 1))
        # The hidden truth the nets learn: fixed by the seed.
        truth = np.random.RandomState(1234)
        self.w = truth.randn(self.dim).astype(np.float32)
        self.b = np.float32(0.5)

    def backward(self, top, propagate_down, bottom):
        pass


class RegressionData(_Batches):
    """tops: x (batch, dim) gaussian, y (batch, 1) = x . w + b."""

    def reshape(self, bottom, top):
        top[0].reshape(self.batch, self.dim)
        top[1].reshape(self.batch, 1)

    def forward(self, bottom, top):
        x = self.rng.randn(self.batch, self.dim).astype(np.float32)
        top[0].data[...] = x
        top[1].data[...] = (x.dot(self.w) + self.b)[:, None]


class ClassData(_Batches):
    """tops: x (batch, dim) gaussian, label (batch,) = 1 where x . w + b > 0."""

    def reshape(self, bottom, top):
        top[0].reshape(self.batch, self.dim)
        top[1].reshape(self.batch)

    def forward(self, bottom, top):
        x = self.rng.randn(self.batch, self.dim).astype(np.float32)
        top[0].data[...] = x
        top[1].data[...] = (x.dot(self.w) + self.b > 0).astype(np.float32)
