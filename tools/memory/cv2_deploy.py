#!/usr/bin/env python3
"""OpenCV's side of the CPU memory comparison: a Caffe deploy net read by
OpenCV's dnn module (cv2.dnn.readNetFromCaffe) and run forward on a
constant input, as `gocaffe test` runs the same files. Run it under
/usr/bin/time -v: the maximum resident set is the figure.

usage: cv2_deploy.py DEPLOY_PROTOTXT CAFFEMODEL BATCH ITERATIONS
"""
import sys

import cv2
import numpy as np


def main():
    proto, weights, batch, iterations = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    net = cv2.dnn.readNetFromCaffe(proto, weights)
    net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
    net.setPreferableTarget(cv2.dnn.DNN_TARGET_CPU)
    x = np.full((batch, 3, 224, 224), 0.5, dtype=np.float32)
    for i in range(iterations):
        net.setInput(x)
        out = net.forward()
        print(f"iteration {i}: output {out.shape}, sum {float(out.sum()):.6g}", flush=True)


if __name__ == "__main__":
    main()
