//go:build mpi

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/internal/mpitest"
)

// mpirunGocaffe is mpirun running np ranks of the gocaffe binary.
func mpirunGocaffe(t *testing.T, np int, args ...string) *exec.Cmd {
	t.Helper()
	cmd := mpitest.Command(t, np, "")
	// mpitest.Command runs the test binary; run the gocaffe binary instead.
	i := 0
	for i < len(cmd.Args) && cmd.Args[i] != os.Args[0] {
		i++
	}
	cmd.Args = append(cmd.Args[:i], append([]string{gocaffeBin}, args...)...)
	return cmd
}

// TestMPITrainMatchesDoubleBatch: two CPU ranks of LeNet at batch 32,
// started by mpirun, end with the weights of one process at batch 64 on
// the same data order (rank r reads records r, r+2, ..., so the ranks
// together read what the single process reads).
func TestMPITrainMatchesDoubleBatch(t *testing.T) {
	dir := t.TempDir()
	db := fashionLMDB(t, dir)
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	for _, d := range []string{one, two} {
		os.Mkdir(d, 0o755)
	}
	const iters = 10
	code, oneLog := gocaffe(t, "train", "-solver", lenetJob(t, one, db, 64, iters, 0))
	if code != 0 {
		t.Fatalf("one process: exit %d\n%s", code, lastLines(oneLog, 20))
	}
	cmd := mpirunGocaffe(t, 2, "train", "-solver", lenetJob(t, two, db, 32, iters, 0))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun -np 2: %v\n%s", err, lastLines(string(out), 30))
	}
	log := string(out)
	if !strings.Contains(log, "Data-parallel training on 2 ranks (MPI rank 0 of 2): each rank runs a batch of 32, the effective batch is 64") {
		t.Errorf("no effective-batch line in the log:\n%s", lastLines(log, 40))
	}
	if n := strings.Count(log, "Optimization Done."); n != 1 {
		t.Errorf("%d ranks logged, want rank 0 alone", n)
	}
	if _, err := os.Stat(filepath.Join(two, fmt.Sprintf("lenet_iter_%d.solverstate", iters))); err != nil {
		t.Errorf("rank 0 wrote no solverstate: %v", err)
	}
	sameWeights(t, filepath.Join(one, fmt.Sprintf("lenet_iter_%d.caffemodel", iters)), filepath.Join(two, fmt.Sprintf("lenet_iter_%d.caffemodel", iters)), iters)
}

// TestMPIRankKilled: when one rank dies, the job stops with an error naming
// it, never hangs, and the last snapshot stays readable.
func TestMPIRankKilled(t *testing.T) {
	dir := t.TempDir()
	db := fashionLMDB(t, dir)
	cmd := mpirunGocaffe(t, 2, "train", "-solver", lenetJob(t, dir, db, 16, 100000, 10))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	snap := filepath.Join(dir, "lenet_iter_20.caffemodel")
	waitForFile(t, snap, 2*time.Minute)
	victim := rankPID(t, 1)
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("mpirun exited 0 after rank 1 was killed:\n%s", lastLines(out.String(), 20))
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the job still runs 60 s after rank 1 was killed (a hang):\n%s", lastLines(out.String(), 20))
	}
	log := out.String()
	if !strings.Contains(log, "rank 1") {
		t.Errorf("the output does not name rank 1:\n%s", lastLines(log, 20))
	}
	t.Logf("after SIGKILL of rank 1:\n%s", lastLines(log, 8))
	readModel(t, snap) // a complete caffemodel
}

// rankPID finds the process of MPI rank r among this user's processes (its
// environment says OMPI_COMM_WORLD_RANK=r and it runs gocaffe).
func rankPID(t *testing.T, r int) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if exe != gocaffeBin {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if bytes.Contains(env, []byte(fmt.Sprintf("OMPI_COMM_WORLD_RANK=%d\x00", r))) {
			return pid
		}
	}
	t.Fatalf("no gocaffe process of rank %d", r)
	return 0
}

// A job of two CPU ranks resumed from rank 0's snapshot on the same number
// of ranks ends with the weights of the job that ran without stopping.
func TestMPIResumeContinuesExactly(t *testing.T) {
	dir := t.TempDir()
	whole, parts := filepath.Join(dir, "whole"), filepath.Join(dir, "parts")
	for _, d := range []string{whole, parts} {
		os.Mkdir(d, 0o755)
	}
	run := func(args ...string) string {
		out, err := mpirunGocaffe(t, 2, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("mpirun -np 2 %v: %v\n%s", args, err, lastLines(string(out), 20))
		}
		return string(out)
	}
	// The teacher net draws new random inputs every iteration: each rank
	// its own, from its own seed.
	run("train", "-solver", writeSolver(t, whole, "s", "max_iter: 40 snapshot: 20"))
	run("train", "-solver", writeSolver(t, parts, "s", "max_iter: 20 snapshot: 20"))
	run("train", "-solver", writeSolver(t, parts, "s", "max_iter: 40 snapshot: 20"), "-snapshot", filepath.Join(parts, "s_iter_20.solverstate"))
	a, b := readModel(t, filepath.Join(whole, "s_iter_40.caffemodel")), readModel(t, filepath.Join(parts, "s_iter_40.caffemodel"))
	if !proto.Equal(a, b) {
		t.Error("the resumed job's weights at iteration 40 differ from the uninterrupted job's")
	}
}
