package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocaffe/gocaffe/cuda"
)

// twoGPUs skips the test unless this build has CUDA and NCCL and the
// machine at least two GPUs.
func twoGPUs(t *testing.T) {
	t.Helper()
	if !cuda.Available() || !cuda.NCCLAvailable() {
		t.Skip("built without CUDA and NCCL (go test -tags cuda,nccl on a machine of several GPUs)")
	}
	if n, err := cuda.DeviceCount(); err != nil || n < 2 {
		t.Skipf("needs two GPUs, found %d (%v)", n, err)
	}
}

// lenetOnOneGPU trains LeNet at batch 64 on GPU 0 for iters iterations in
// dir and returns the caffemodel.
func lenetOnOneGPU(t *testing.T, dir, db string, iters int) string {
	t.Helper()
	if code, log := gocaffe(t, "train", "-gpu", "0", "-solver", lenetJob(t, dir, db, 64, iters, 0)); code != 0 {
		t.Fatalf("one GPU: exit %d\n%s", code, lastLines(log, 20))
	}
	return filepath.Join(dir, fmt.Sprintf("lenet_iter_%d.caffemodel", iters))
}

// `gocaffe train -gpu 0,1` at batch 32 ends with the weights of one GPU at
// batch 64.
func TestTwoGPUsMatchDoubleBatch(t *testing.T) {
	twoGPUs(t)
	dir := t.TempDir()
	db := fashionLMDB(t, dir)
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	os.Mkdir(one, 0o755)
	os.Mkdir(two, 0o755)
	const iters = 10
	want := lenetOnOneGPU(t, one, db, iters)
	code, log := gocaffe(t, "train", "-gpu", "0,1", "-solver", lenetJob(t, two, db, 32, iters, 0))
	if code != 0 {
		t.Fatalf("-gpu 0,1: exit %d\n%s", code, lastLines(log, 20))
	}
	if !strings.Contains(log, "Data-parallel training on 2 ranks (NCCL rank 0 of 2): each rank runs a batch of 32, the effective batch is 64") {
		t.Errorf("no effective-batch line:\n%s", lastLines(log, 30))
	}
	sameWeights(t, want, filepath.Join(two, fmt.Sprintf("lenet_iter_%d.caffemodel", iters)), iters)
}

// torchrunRanks starts size gocaffe processes with the environment torchrun
// gives its workers.
func torchrunRanks(t *testing.T, size int, out []*bytes.Buffer, args ...string) []*exec.Cmd {
	t.Helper()
	port := 29600 + os.Getpid()%300
	cmds := make([]*exec.Cmd, size)
	for r := range size {
		cmd := exec.Command(gocaffeBin, args...)
		cmd.Env = append(os.Environ(), fmt.Sprintf("RANK=%d", r), fmt.Sprintf("LOCAL_RANK=%d", r),
			fmt.Sprintf("WORLD_SIZE=%d", size), "MASTER_ADDR=127.0.0.1", fmt.Sprintf("MASTER_PORT=%d", port))
		out[r] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out[r], out[r]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[r] = cmd
	}
	return cmds
}

// Two processes started as torchrun starts them train as one GPU at twice
// the batch.
func TestTorchrunStyleRanks(t *testing.T) {
	twoGPUs(t)
	dir := t.TempDir()
	db := fashionLMDB(t, dir)
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	os.Mkdir(one, 0o755)
	os.Mkdir(two, 0o755)
	const iters = 10
	want := lenetOnOneGPU(t, one, db, iters)
	out := make([]*bytes.Buffer, 2)
	cmds := torchrunRanks(t, 2, out, "train", "-gpu", "0,1", "-solver", lenetJob(t, two, db, 32, iters, 0))
	for r, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("rank %d: %v\n%s", r, err, lastLines(out[r].String(), 20))
		}
	}
	if !strings.Contains(out[0].String(), "the effective batch is 64") || out[1].Len() != 0 && strings.Contains(out[1].String(), "Optimization Done") {
		t.Errorf("rank 0 should log the job, rank 1 nothing:\nrank 0:\n%s\nrank 1:\n%s", lastLines(out[0].String(), 10), lastLines(out[1].String(), 10))
	}
	sameWeights(t, want, filepath.Join(two, fmt.Sprintf("lenet_iter_%d.caffemodel", iters)), iters)
}

// When one of the torchrun-style ranks dies, the other stops with an error
// naming it within a minute, and the last snapshot stays readable.
func TestTorchrunStyleRankKilled(t *testing.T) {
	twoGPUs(t)
	dir := t.TempDir()
	db := fashionLMDB(t, dir)
	out := make([]*bytes.Buffer, 2)
	cmds := torchrunRanks(t, 2, out, "train", "-gpu", "0,1", "-solver", lenetJob(t, dir, db, 32, 1000000, 200))
	snap := filepath.Join(dir, "lenet_iter_400.caffemodel")
	waitForFile(t, snap, 2*time.Minute)
	cmds[1].Process.Kill()
	cmds[1].Wait()
	done := make(chan error, 1)
	go func() { done <- cmds[0].Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("rank 0 exited 0 after rank 1 died")
		}
	case <-time.After(60 * time.Second):
		// Go's runtime prints every goroutine's stack on SIGQUIT: where
		// rank 0 waits.
		cmds[0].Process.Signal(syscall.SIGQUIT)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmds[0].Process.Kill()
		}
		t.Fatalf("rank 0 still ran 60 s after rank 1 died (a hang); its log and gocaffe's stacks:\n%s", ownStacks(out[0].String()))
	}
	log := out[0].String()
	if !strings.Contains(log, "rank 1 stopped without finishing") {
		t.Errorf("rank 0's output does not name rank 1:\n%s", lastLines(log, 10))
	}
	t.Logf("rank 0 after rank 1 was killed:\n%s", lastLines(log, 6))
	readModel(t, snap)
}

// ownStacks returns a Go program's output up to its SIGQUIT dump, and of
// the dump the goroutines with a frame of gocaffe's: where it waited.
func ownStacks(out string) string {
	log, dump, _ := strings.Cut(out, "\ngoroutine ")
	parts := []string{lastLines(log, 15)}
	for _, g := range strings.Split("goroutine "+dump, "\n\n") {
		if strings.Contains(g, "gocaffe/gocaffe/") {
			parts = append(parts, g)
		}
	}
	return strings.Join(parts, "\n\n")
}
