"""Compares two .npy outputs: max |a - b| over max |b| (relative to the
reference's largest magnitude), and the largest elementwise relative error
where |b| is not tiny.

usage: /usr/bin/python3 compare.py GOCAFFE.npy REFERENCE.npy
"""
import sys

import numpy as np

a, b = np.load(sys.argv[1]).astype(np.float64), np.load(sys.argv[2]).astype(np.float64)
if a.size != b.size:
    print("shape %s against %s" % (a.shape, b.shape))
    sys.exit(1)
a, b = a.reshape(-1), b.reshape(-1)
scale = max(np.abs(b).max(), 1e-30)
print("max_abs_diff %.3g max_abs_ref %.3g relative %.3g" % (np.abs(a - b).max(), scale, np.abs(a - b).max() / scale))
