"""OpenCV 4.x dnn's side of the inference comparison (docs/performance.md).

usage: /usr/bin/python3 opencv_bench.py MODEL WEIGHTS INPUT.npy ITERATIONS [OUT.npy [BLOB]]

Reads the Caffe prototxt and weights with cv2.dnn.readNetFromCaffe, runs on
DNN_BACKEND_OPENCV / DNN_TARGET_CPU with cv2.setNumThreads(2) (or
$CV_THREADS), two untimed forward passes first, then ITERATIONS timed ones,
and prints the line gocaffe's tools/infer time prints: median_ms, min_ms,
iterations. OUT.npy receives the net's output (or BLOB's). With
$CV_LAYERS set, it then prints each layer's median time over the timed
passes, from net.getPerfProfile() (OpenCV's own per-layer timing; the
layers it fused into others show 0).
"""
import os
import statistics
import sys
import time

import cv2
import numpy as np


def print_layers(net, profiles):
    """Prints each layer's median time in ms over the passes' profiles
    (ticks per layer, in the order of getLayerNames)."""
    ms = np.median(np.array(profiles), axis=0) * 1000 / cv2.getTickFrequency()
    for name, t in zip(net.getLayerNames(), ms):
        layer = net.getLayer(name)
        print("layer %-36s %-20s %8.3f ms" % (name, layer.type, t))


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
    layers = []
    for _ in range(int(iters)):
        t = time.perf_counter()
        y = net.forward(*names)
        times.append((time.perf_counter() - t) * 1000)
        if os.environ.get("CV_LAYERS"):
            layers.append(net.getPerfProfile()[1].ravel())
    print("median_ms %.3f min_ms %.3f iterations %d times %s" % (
        statistics.median(times), min(times), len(times), ",".join("%.2f" % v for v in times)))
    if layers:
        print_layers(net, layers)
    if out:
        np.save(out, np.ascontiguousarray(y, dtype=np.float32))


if __name__ == "__main__":
    main()
