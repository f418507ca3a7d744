"""LeNet on Fashion-MNIST trained from Python on the GPU: caffe.set_mode_gpu(),
then the learning notebook's flow (lenet.py), printing the train loss and
the test accuracy as it goes. Needs the package built with CUDA:

    python/build -tags cuda
    go build -o /tmp/gocaffe ./cmd/gocaffe
    PYTHONPATH=python:python/test python3 python/test/gpu_lenet.py --gocaffe /tmp/gocaffe [--iters 500]

It exits 0 when the final test accuracy is at least 0.80 (0.85 takes
about 1000 iterations, as on the CPU).
"""

import argparse
import os
import sys
import tempfile
import time

import caffe

import lenet


def main():
    ap = argparse.ArgumentParser(description='LeNet on Fashion-MNIST with caffe.set_mode_gpu()')
    ap.add_argument('--gocaffe', default=os.environ.get('GOCAFFE_BIN', 'gocaffe'),
                    help='the gocaffe command (convert_mnist_data makes the LMDBs)')
    ap.add_argument('--iters', type=int, default=500)
    ap.add_argument('--device', type=int, default=0)
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix='gpu-lenet-')
    caffe.set_device(args.device)
    caffe.set_mode_gpu()  # raises here in a module built without -tags cuda
    start = time.time()
    loss, acc = lenet.run(args.gocaffe, workdir, niter=args.iters, test_interval=100, gpu=True)
    print('GPU %d: %d iterations in %.1f s, final train loss %.4f, test accuracy %.4f'
          % (args.device, args.iters, time.time() - start, loss[-1], acc[-1]))
    return 0 if acc[-1] >= 0.80 else 1


if __name__ == '__main__':
    sys.exit(main())
