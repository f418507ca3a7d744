# Writes hdf5_train.h5 (with h5py, as a Caffe user would) for
# hdf5_data.prototxt: 16 rows of 3x4x4 data and labels in [0, 4).
import h5py
import numpy as np

rng = np.random.default_rng(1701)
with h5py.File('hdf5_train.h5', 'w') as f:
    f['data'] = rng.standard_normal((16, 3, 4, 4)).astype(np.float32)
    f.create_dataset('label', data=rng.integers(0, 4, 16).astype(np.float32), compression='gzip')
