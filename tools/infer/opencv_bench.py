"""OpenCV 4.x dnn's side of the inference comparison (docs/performance.md).

usage: /usr/bin/python3 opencv_bench.py MODEL WEIGHTS INPUT.npy ITERATIONS [OUT.npy [BLOB]]

Reads the Caffe prototxt and weights with cv2.dnn.readNetFromCaffe, runs on
DNN_BACKEND_OPENCV / DNN_TARGET_CPU with cv2.setNumThreads(2) (or
$CV_THREADS), two untimed forward passes first, then ITERATIONS timed ones,
and prints the line gocaffe's tools/infer time prints: median_ms, min_ms,
iterations. OUT.npy receives the net's output (or BLOB's).
"""
import os
import statistics
import sys
import time

import cv2
import numpy as np


def main():
    model, weights, inp, iters = sys.argv[1:5]
    out = sys.argv[5] if len(sys.argv) > 5 else None
    blob = sys.argv[6] if len(sys.argv) > 6 else None
    cv2.setNumThreads(int(os.environ.get("CV_THREADS", "2")))
    net = cv2.dnn.readNetFromCaffe(model, weights)
    net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
    net.setPreferableTarget(cv2.dnn.DNN_TARGET_CPU)
    x = np.load(inp)
    net.setInput(x)
    names = [blob] if blob else []
    for _ in range(2):
        y = net.forward(*names)
    times = []
    for _ in range(int(iters)):
        t = time.perf_counter()
        y = net.forward(*names)
        times.append((time.perf_counter() - t) * 1000)
    print("median_ms %.3f min_ms %.3f iterations %d times %s" % (
        statistics.median(times), min(times), len(times), ",".join("%.2f" % v for v in times)))
    if out:
        np.save(out, np.ascontiguousarray(y, dtype=np.float32))


if __name__ == "__main__":
    main()
