package mathfn

// The arm64 assembly, NEON kernels in Go's assembler (gemm_arm64.s,
// elementwise_arm64.s, internal/rows/rows_arm64.s and
// internal/vec/vec_arm64.s), is written by internal/neongen. The directive
// sits in this file, built on every architecture, so that `go generate
// ./mathfn/` regenerates it on any machine (CI's is amd64).

//go:generate go run ./internal/neongen
