"""The learning notebook's LeNet on Fashion-MNIST, on the CPU: at least
0.85 test accuracy (lenet.py)."""

import unittest

import gctest
import lenet


class TestLeNet(gctest.TempDirTest):
    def test_fashion_mnist(self):
        if gctest.gocaffe_bin() is None:
            self.skipTest('GOCAFFE_BIN names no gocaffe command (the Go test TestPython sets it)')
        try:
            lenet.idx_file('train-images-idx3-ubyte')
        except IOError:
            self.skipTest('no Fashion-MNIST in %s (Debian: dataset-fashion-mnist)' % lenet.IDX)
        loss, acc = lenet.run(gctest.gocaffe_bin(), self.dir, niter=1500)
        self.assertLess(loss[-100:].mean(), loss[:100].mean() / 2)
        self.assertGreaterEqual(acc[-1], 0.85, 'test accuracies %s' % acc)


if __name__ == '__main__':
    unittest.main()
