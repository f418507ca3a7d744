// Package vec holds the layers' vector kernels in AVX-512 assembly, chosen
// by CPU feature at run time (the plain Go loops of their callers run
// where the CPU or the build has none): the zero-slope ReLU, the negative
// powers of LRN's scale, and runs of max-pooling windows. On arm64 the
// first two are NEON (vec_arm64.s, written by mathfn/internal/neongen);
// max pooling stays in Go there. mathfn hands
// them to the layer packages; like mathfn/internal/rows, a package of its
// own without cgo, so that the openblas build's cgo package holds no
// assembly.
package vec
