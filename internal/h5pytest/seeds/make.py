# Writes the HDF5 files of this folder, the seed corpus of the HDF5 fuzz
# targets (blob's FuzzHDF5Data, net's FuzzHDF5Weights), with h5py
# (libhdf5): every storage form and group kind the reader reads.
# Run with /usr/bin/python3 (Debian's python3-h5py) in this folder.
import h5py, numpy as np
a = np.arange(4*3*2).reshape(4, 3, 2)
for libver in ['earliest', 'latest']:
    with h5py.File('data_%s.h5' % libver, 'w', libver=libver) as f:
        # the HDF5Data layer's tops: rows of data and their labels
        f['data'] = a.astype(np.float32)
        f['label'] = np.arange(4, dtype=np.float64)
        f.create_dataset('gzip', data=a.astype(np.float32), chunks=(2, 3, 1), compression='gzip', shuffle=True, fletcher32=True)
        f.create_dataset('chunked', data=a.astype('>i2'), chunks=(4, 3, 2))
        f.create_dataset('single', data=a.astype(np.uint8), chunks=(4, 3, 2), compression='gzip')
        f.create_dataset('grow', data=a.astype(np.float64), chunks=(1, 3, 2), maxshape=(None, 3, 2)) if libver == 'earliest' else None
        f.create_dataset('sparse', shape=(6, 2), dtype=np.float32, chunks=(2, 2))[0:2] = 1
        f['compact'] = np.arange(3, dtype=np.int64)
        f['scalar'] = np.float32(2.5)
        f['str'] = np.bytes_('net.caffemodel')
        f.create_dataset('never', shape=(3,), dtype=np.float32)
    # weights as Net::ToHDF5 writes them: /data/<layer>/<i>
    with h5py.File('weights_%s.h5' % libver, 'w', libver=libver) as f:
        ip = f.create_group('data').create_group('ip')
        ip['0'] = np.arange(6, dtype=np.float32).reshape(2, 3)
        ip['1'] = np.ones(2, np.float32)
        f.create_group('diff')
    with h5py.File('many_%s.h5' % libver, 'w', libver=libver, track_order=True) as f:
        g = f.create_group('data')
        for i in range(12):
            g['l%02d' % i] = np.array([i], np.float32)
