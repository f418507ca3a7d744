package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/mpi"
	"github.com/gocaffe/gocaffe/parallel"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/solver"
)

// trainRank is one solver this process runs: its device and, in a
// data-parallel job, its communicator.
type trainRank struct {
	ctx  *device.Context
	comm parallel.Comm
}

// trainRanks decides how this process takes part in training, as the
// launcher and the flags say:
//
//   - started by mpirun (or srun with PMI): one rank of the MPI job, on a
//     GPU (NCCL, the id carried by MPI) when -gpu or the solver asks for
//     one, else on the CPU (MPI);
//   - started with torchrun's variables (RANK, WORLD_SIZE, ...): one GPU
//     rank (NCCL, the id carried by a TCP rendezvous);
//   - -gpu with several devices: one rank per device in this process;
//   - otherwise one solver, as before.
func (f *netFlags) trainRanks(p *caffepb.SolverParameter) ([]trainRank, error) {
	if mpi.Launched(lookupEnv) {
		return f.mpiRank(p)
	}
	launch, ok, err := parallel.LaunchFromLookup(lookupEnv)
	if err != nil {
		return nil, err
	}
	if ok && launch.WorldSize > 1 {
		return f.envRank(p, launch)
	}
	if f.gpu != "" {
		ids, err := parseGPUs(f.gpu, cuda.DeviceCount)
		if err != nil {
			return nil, err
		}
		if len(ids) > 1 {
			return f.groupRanks(ids)
		}
	}
	ctx, err := f.solverContext(p)
	if err != nil {
		return nil, err
	}
	return []trainRank{{ctx: ctx}}, nil
}

// gpuFor returns the device a process's rank uses: the localRank-th of the
// -gpu list (wrapping), the solver's device_id when no list is given and
// the solver runs on the GPU, or -1 for the CPU.
func (f *netFlags) gpuFor(p *caffepb.SolverParameter, localRank int) (int, error) {
	if f.gpu == "" {
		if p.GetSolverMode() != caffepb.SolverParameter_GPU || !cuda.Available() {
			return -1, nil
		}
		n, err := cuda.DeviceCount()
		if err != nil {
			return -1, err
		}
		return localRank % max(n, 1), nil
	}
	ids, err := parseGPUs(f.gpu, cuda.DeviceCount)
	if err != nil {
		return -1, err
	}
	return ids[localRank%len(ids)], nil
}

// mpiLocalRank is the rank among this machine's ranks, as MPI launchers
// and Slurm say it.
func mpiLocalRank() int {
	for _, v := range []string{"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"} {
		if s, _ := lookupEnv(v); s != "" {
			if n, err := strconv.Atoi(s); err == nil {
				return n
			}
		}
	}
	return 0
}

func (f *netFlags) mpiRank(p *caffepb.SolverParameter) ([]trainRank, error) {
	if !mpi.Available() {
		return nil, errors.New("started by an MPI launcher, but this gocaffe was built without MPI: every rank would train alone and overwrite the others' snapshots; rebuild with -tags mpi (Debian: libopenmpi-dev)")
	}
	gpu, err := f.gpuFor(p, mpiLocalRank())
	if err != nil {
		return nil, err
	}
	if gpu < 0 {
		comm, err := parallel.NewMPI()
		if err != nil {
			return nil, err
		}
		return []trainRank{{ctx: hostContext(), comm: comm}}, nil
	}
	ctx, err := f.open(gpu)
	if err != nil {
		return nil, err
	}
	comm, err := parallel.NewNCCLOverMPI(ctx)
	if err != nil {
		return nil, err
	}
	return []trainRank{{ctx: ctx, comm: comm}}, nil
}

func (f *netFlags) envRank(p *caffepb.SolverParameter, l parallel.Launch) ([]trainRank, error) {
	gpu, err := f.gpuFor(p, l.LocalRank)
	if err != nil {
		return nil, err
	}
	if gpu < 0 {
		return nil, fmt.Errorf("RANK=%d WORLD_SIZE=%d: ranks started through the environment run on GPUs (NCCL); give -gpu, or start CPU ranks with mpirun and a gocaffe built with -tags mpi", l.Rank, l.WorldSize)
	}
	ctx, err := f.open(gpu)
	if err != nil {
		return nil, err
	}
	comm, err := parallel.NewNCCLFromEnv(ctx, l, exitIfStuck)
	if err != nil {
		return nil, err
	}
	return []trainRank{{ctx: ctx, comm: comm}}, nil
}

func (f *netFlags) groupRanks(ids []int) ([]trainRank, error) {
	ctxs := make([]*device.Context, len(ids))
	for i, id := range ids {
		ctx, err := f.open(id)
		if err != nil {
			return nil, err
		}
		ctxs[i] = ctx
	}
	comms, err := parallel.NewNCCLGroup(ctxs)
	if err != nil {
		return nil, fmt.Errorf("-gpu %s: %w", f.gpu, err)
	}
	ranks := make([]trainRank, len(ids))
	for i := range ids {
		ranks[i] = trainRank{ctx: ctxs[i], comm: comms[i]}
	}
	return ranks, nil
}

// logJob says how the job runs, on rank 0: the ranks, and the batch each
// runs and the effective batch, the most common confusion of multi-GPU
// training.
func logJob(s *solver.Solver[float32], comm parallel.Comm) {
	if comm == nil || comm.Size() <= 1 || !s.Root() {
		return
	}
	batch := 0
	if blobs := s.Net().Blobs(); len(blobs) > 0 && blobs[0].NumAxes() > 0 {
		batch = blobs[0].Shape()[0]
	}
	glog.Infof("Data-parallel training on %d ranks (%v): each rank runs a batch of %d, the effective batch is %d (iter_size %d: %d images per update)",
		comm.Size(), comm, batch, comm.Size()*batch, s.Param().GetIterSize(), comm.Size()*batch*int(s.Param().GetIterSize()))
}

// quietRank silences the log of a process whose only rank is not rank 0,
// as Caffe logs from its root solver only; errors still reach stderr.
func quietRank(ranks []trainRank) {
	if len(ranks) == 1 && ranks[0].comm != nil && ranks[0].comm.Rank() != 0 {
		glog.SetOutput(io.Discard)
	}
}

// solveAll runs every solver of this process, one goroutine each when
// there are several, and returns the first error. When one rank fails, the
// communicators of all are aborted, so that no rank waits forever in a
// collective for the one that stopped.
func solveAll(solvers []*solver.Solver[float32], ranks []trainRank, resume string) error {
	if len(solvers) == 1 {
		err := solvers[0].Solve(resume)
		if err != nil && ranks[0].comm != nil {
			ranks[0].comm.Abort(err)
		}
		return err
	}
	errs := make([]error, len(solvers))
	var once sync.Once
	var wg sync.WaitGroup
	for i, s := range solvers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = s.Solve(resume); errs[i] != nil {
				once.Do(func() {
					for _, r := range ranks {
						r.comm.Abort(fmt.Errorf("rank %d failed: %w", i, errs[i]))
					}
				})
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("rank %d: %w", i, err)
		}
	}
	return nil
}

// exitIfStuck ends the process when a dead rank's communicator was aborted
// but the training loop has not returned 30 s later (a device that does not
// let go of a cancelled collective): an error and exit 1, never a hang.
func exitIfStuck(cause error) {
	time.AfterFunc(30*time.Second, func() {
		fmt.Fprintf(os.Stderr, "gocaffe train: %v; stopping\n", cause)
		os.Exit(1)
	})
}

// closeRanks releases the communicators after a run.
func closeRanks(ranks []trainRank) {
	for _, r := range ranks {
		if r.comm != nil {
			r.comm.Close()
		}
	}
}
