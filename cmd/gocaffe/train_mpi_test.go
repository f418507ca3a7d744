//go:build mpi

package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocaffe/gocaffe/internal/mpitest"
)

// lenetJob writes LeNet's train net reading the Fashion-MNIST training
// LMDB at batch, and a solver for it, into dir; it returns the solver.
func lenetJob(t *testing.T, dir, db string, batch, maxIter, snapshot int) string {
	t.Helper()
	text, err := os.ReadFile("../../models/lenet/lenet_train_test.prototxt")
	if err != nil {
		t.Fatal(err)
	}
	net := strings.Replace(string(text), `source: "examples/lenet/fashion_mnist_train_lmdb"`, fmt.Sprintf("source: %q", db), 1)
	net = strings.Replace(net, "batch_size: 64", fmt.Sprintf("batch_size: %d", batch), 1)
	netPath := filepath.Join(dir, "lenet.prototxt")
	if err := os.WriteFile(netPath, []byte(net), 0o644); err != nil {
		t.Fatal(err)
	}
	solver := fmt.Sprintf(`net: %q
base_lr: 0.01 momentum: 0.9 weight_decay: 0.0005 lr_policy: "inv" gamma: 0.0001 power: 0.75
display: 5 max_iter: %d snapshot: %d snapshot_prefix: %q random_seed: 7 solver_mode: CPU
`, netPath, maxIter, snapshot, filepath.Join(dir, "lenet"))
	path := filepath.Join(dir, "solver.prototxt")
	if err := os.WriteFile(path, []byte(solver), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fashionLMDB converts the Fashion-MNIST training set into an LMDB in dir.
func fashionLMDB(t *testing.T, dir string) string {
	t.Helper()
	images := filepath.Join(fashionDir, "train-images-idx3-ubyte.gz")
	if _, err := os.Stat(images); err != nil {
		t.Skipf("dataset-fashion-mnist is not installed: %v", err)
	}
	db := filepath.Join(dir, "train_lmdb")
	if code, log := gocaffe(t, "convert_mnist_data", images, filepath.Join(fashionDir, "train-labels-idx1-ubyte.gz"), db); code != 0 {
		t.Fatalf("convert_mnist_data: exit %d\n%s", code, log)
	}
	return db
}

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
	a := readModel(t, filepath.Join(one, fmt.Sprintf("lenet_iter_%d.caffemodel", iters)))
	b := readModel(t, filepath.Join(two, fmt.Sprintf("lenet_iter_%d.caffemodel", iters)))
	if _, err := os.Stat(filepath.Join(two, fmt.Sprintf("lenet_iter_%d.solverstate", iters))); err != nil {
		t.Errorf("rank 0 wrote no solverstate: %v", err)
	}
	// Per blob, the largest difference relative to the blob's largest
	// weight. The ranks sum their images' gradients in another order than
	// the single process (evens and odds, then the two sums), so float32
	// results differ by about 1e-7 per iteration (5e-7 after 10 here).
	// Left to run longer, the difference stays there until some near tie
	// (a max-pooling argmax, a ReLU at 0) falls the other way and one
	// image's gradient takes another path: here at iteration 20, after
	// which it is 3e-5 and grows with the momentum. A single process at
	// batch 32 with iter_size 2, which sums in the same order as at 64,
	// gives identical weights.
	worst := 0.0
	for i, la := range a.Layer {
		lb := b.Layer[i]
		for j, ba := range la.Blobs {
			diff, scale := 0.0, 0.0
			for k, v := range ba.Data {
				diff = max(diff, math.Abs(float64(v-lb.Blobs[j].Data[k])))
				scale = max(scale, math.Abs(float64(v)))
			}
			if scale == 0 {
				t.Errorf("layer %s blob %d is all zero", la.GetName(), j)
				continue
			}
			worst = max(worst, diff/scale)
		}
	}
	t.Logf("after %d iterations the weights differ by at most %.3g of each blob's largest weight", iters, worst)
	if worst > 1e-5 {
		t.Errorf("weights differ by up to %.3g of a blob's largest weight, want <= 1e-5", worst)
	}
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
