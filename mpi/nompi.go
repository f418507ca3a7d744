//go:build !mpi

package mpi

// Available reports whether this build has MPI.
func Available() bool { return false }

// Init returns ErrNoMPI in a build without the `mpi` tag.
func Init() (rank, size int, err error) { return 0, 0, ErrNoMPI }

// AllReduceSum returns ErrNoMPI in a build without the `mpi` tag.
func AllReduceSum[T float32 | float64](buf []T) error { return ErrNoMPI }

// Broadcast returns ErrNoMPI in a build without the `mpi` tag.
func Broadcast(buf []byte, root int) error { return ErrNoMPI }

// Barrier returns ErrNoMPI in a build without the `mpi` tag.
func Barrier() error { return ErrNoMPI }

// Abort returns ErrNoMPI in a build without the `mpi` tag.
func Abort(code int) error { return ErrNoMPI }

// Finalize returns ErrNoMPI in a build without the `mpi` tag.
func Finalize() error { return ErrNoMPI }
