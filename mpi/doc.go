// Package mpi is gocaffe's small binding to MPI (Open MPI or MPICH), the
// engine that CPU ranks of data-parallel training all-reduce their
// gradients through, and that carries the NCCL unique id to GPU ranks
// started by mpirun.
//
// The binding is compiled with the `mpi` build tag, on a machine with an
// MPI implementation's headers and library (Debian: libopenmpi-dev,
// openmpi-bin); it finds them through pkg-config (ompi-c). Without the tag
// the package declares the same API and every call returns ErrNoMPI, so the
// default build needs no MPI and code above asks for it at run time.
//
// # Threads
//
// MPI is initialised with MPI_THREAD_SERIALIZED: any goroutine, whatever
// OS thread it runs on, may call into MPI, and this package serialises the
// calls with a mutex.
//
// # Errors
//
// MPI_COMM_WORLD's error handler is MPI_ERRORS_RETURN, so a failed call
// (a peer that died, a mismatched collective) comes back as an *Error with
// MPI's own error string instead of aborting the process.
package mpi

import (
	"errors"
	"fmt"
)

// ErrNoMPI is returned by every call in a build without the `mpi` tag.
var ErrNoMPI = errors.New("mpi: gocaffe was built without MPI (rebuild with -tags mpi on a machine with libopenmpi-dev)")

// Error is a failure reported by MPI.
type Error struct {
	Call string // the call that failed
	Code int    // MPI's error code
	Msg  string // MPI_Error_string's text
}

func (e *Error) Error() string {
	return fmt.Sprintf("mpi: %s failed: %s (error %d)", e.Call, e.Msg, e.Code)
}

// Launched reports whether the process whose environment lookup reads
// (the gocaffe command passes os.LookupEnv; the library reads no
// environment) was started by an MPI launcher (mpirun, mpiexec, srun with
// PMI): the launchers of Open MPI, MPICH and Slurm's PMI set these
// variables in every rank.
func Launched(lookup func(name string) (string, bool)) bool {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"} {
		if s, _ := lookup(v); s != "" {
			return true
		}
	}
	return false
}
