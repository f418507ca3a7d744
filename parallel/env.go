package parallel

import (
	"fmt"
	"strconv"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
)

// Launch is where this process sits in a job started the way torchrun,
// Slurm scripts written for it and Kubernetes operators start PyTorch jobs:
// through the environment variables RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR and MASTER_PORT.
type Launch struct {
	Rank, WorldSize int
	LocalRank       int // the rank among this machine's ranks: the GPU to use
	MasterAddr      string
	MasterPort      int
}

// LaunchFromLookup reads the launcher's variables through lookup: the
// gocaffe command passes os.LookupEnv (the library reads no environment);
// a program that starts its ranks otherwise, or a test, passes its own.
// ok is false when RANK and WORLD_SIZE are both unset or empty (not such a
// job); a variable that is set but wrong is an error naming it.
func LaunchFromLookup(lookup func(name string) (string, bool)) (l Launch, ok bool, err error) {
	get := func(name string) string {
		v, _ := lookup(name)
		return v
	}
	if get("RANK") == "" && get("WORLD_SIZE") == "" {
		return Launch{}, false, nil
	}
	num := func(name string, def int, need bool) int {
		s := get(name)
		if s == "" {
			if need && err == nil {
				err = fmt.Errorf("parallel: %s is not set (a torchrun-style launch sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT)", name)
			}
			return def
		}
		v, e := strconv.Atoi(s)
		if (e != nil || v < 0) && err == nil {
			err = fmt.Errorf("parallel: %s=%q is not a non-negative integer", name, s)
		}
		return v
	}
	l.Rank = num("RANK", 0, true)
	l.WorldSize = num("WORLD_SIZE", 0, true)
	l.LocalRank = num("LOCAL_RANK", l.Rank, false)
	l.MasterPort = num("MASTER_PORT", 29500, false) // torchrun's default port
	l.MasterAddr = get("MASTER_ADDR")
	if l.MasterAddr == "" {
		l.MasterAddr = "127.0.0.1"
	}
	if err == nil && (l.WorldSize < 1 || l.Rank >= l.WorldSize) {
		err = fmt.Errorf("parallel: RANK=%d is not below WORLD_SIZE=%d", l.Rank, l.WorldSize)
	}
	return l, err == nil, err
}

// NewNCCLFromEnv joins, as GPU rank l.Rank on ctx, the NCCL communicator of
// a torchrun-style job: rank 0 makes the unique id and the TCP rendezvous
// on l.MasterAddr:l.MasterPort hands it to the others. The rendezvous's
// connections stay open for the rest of the run: when a rank dies, every
// other rank aborts its communicator and its next collective fails with an
// error naming the rank that died, never a hang. onDeath, if not nil, is
// called first, before that abort (a command may end the process if the
// device, or the abort itself, does not let go). The ranks wait for each other at the start for as long
// as ctx's settings say (RendezvousTimeout, GOCAFFE_RENDEZVOUS_TIMEOUT;
// 5 minutes by default).
func NewNCCLFromEnv(ctx *device.Context, l Launch, onDeath func(error)) (Comm, error) {
	var id cuda.NCCLUniqueID
	if l.Rank == 0 {
		var err error
		if id, err = cuda.NCCLGetUniqueID(); err != nil {
			return nil, err
		}
	}
	var comm *ncclComm
	w, payload, err := Rendezvous(l, id[:], ctx.Settings().RendezvousWait(), func(cause error) {
		// onDeath first: ncclCommAbort itself may wait for the device
		// (a captured collective that does not let go), and the process
		// must still end.
		if onDeath != nil {
			onDeath(cause)
		}
		if comm != nil {
			comm.Abort(cause)
		}
	})
	if err != nil {
		return nil, err
	}
	copy(id[:], payload)
	c, err := cuda.NewNCCLComm(ctx.Device(), id, l.Rank, l.WorldSize)
	if err != nil {
		w.close(false)
		return nil, err
	}
	comm = newNCCLComm(c, ctx)
	comm.watch = w
	return comm, nil
}
