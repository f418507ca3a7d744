// Package hdf5 reads and writes the part of HDF5 that Caffe uses: groups
// of numeric n-dimensional datasets (and the one int and one string dataset
// of a .solverstate.h5). It is pure Go, so the default build stays free of
// cgo.
//
// # Why our own
//
// Caffe's HDF5 files are HDF5Data training sets (usually written by h5py),
// HDF5Output dumps, and `snapshot_format: HDF5` snapshots. Those need groups,
// float and integer datasets, and the classic file structures that libhdf5
// and h5py write by default. We looked for a maintained pure-Go HDF5 module
// on the module proxy and found none that it serves (gonum's hdf5 is a cgo
// binding, and it is not served either); a cgo binding would also put cgo
// outside cuda/ into every build that wants HDF5. So this package
// implements that subset, and its tests run against files written by h5py
// (libhdf5) and check that h5py and h5dump read what it writes.
//
// # What it reads
//
//   - superblocks version 0, 1, 2 and 3 (user blocks of 512·2^n bytes are skipped);
//   - object headers version 1 and 2, with continuation blocks;
//   - groups stored as symbol tables (B-tree version 1, local heap: what
//     libhdf5 writes by default) and new-style groups (libver "latest" or
//     track_order): compact (link messages) or dense (a fractal heap indexed
//     by a version-2 B-tree) up to a few thousand links; larger ones are
//     refused with an error saying so;
//   - datasets of little- or big-endian integers (1 to 8 bytes, signed or
//     not) and IEEE floats (4 or 8 bytes), read as float32 or float64 as
//     Caffe's H5LTread_dataset_float does, and fixed-length strings;
//   - contiguous, compact and chunked storage: layout messages version 1 to
//     4, chunks indexed by a version-1 B-tree (libhdf5's default) or, with
//     layout version 4, a single chunk, an implicit index or an unpaged
//     fixed array; other chunk indexes are refused;
//   - the deflate (gzip), shuffle and Fletcher-32 filters.
//
// # Sizes written in the file
//
// Every size a file states is checked before anything is allocated for
// it: against the file's length (a link name, a heap, a chunk, contiguous
// data, compact data shorter than its dataspace), against the limits of
// the format (a chunk holds less than 4 GiB; a deflated chunk may not
// inflate past its size), and against the memory the process can still
// allocate (internal/sysmem) for data the file need not hold (a dataset
// never written, chunks written in part). Dataset.CheckStorage makes the
// file-level checks alone, for callers that allocate before reading. A
// B-tree node, chunk or object header block reached twice in one walk is
// an error: libhdf5 never shares them, and a crafted file that does would
// be walked once per path.
//
// # What it writes
//
// What libhdf5 writes by default and every HDF5 reader reads: superblock
// version 0, version-1 object headers, symbol-table groups, contiguous
// datasets of little-endian float32, float64 or int32, and fixed-length
// null-terminated ASCII strings in scalar datasets (Caffe's
// H5LTmake_dataset_string). Files are built in memory (Builder.Bytes) and
// written whole; gocaffe writes them to a temporary file and renames it.
//
// An Appender writes instead a file whose float datasets grow by rows in
// place (HDF5Output's passes): chunked datasets with an unlimited first
// dimension, their chunks indexed by a version-1 B-tree, as libhdf5 makes
// a resizable dataset by default.
package hdf5
