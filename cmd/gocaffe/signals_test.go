package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// trainProcess is a gocaffe train process whose log is read as it runs.
type trainProcess struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	log  bytes.Buffer
	done chan struct{} // closed when the process has ended
	code int
}

// startTrain starts gocaffe with args and reads its log in the background;
// the process is killed when the test ends, should it still run.
func startTrain(t *testing.T, args ...string) *trainProcess {
	t.Helper()
	p := &trainProcess{cmd: exec.Command(gocaffeBin, args...), done: make(chan struct{})}
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
		p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

func (p *trainProcess) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// waitForLog waits until the log has a line matching re.
func (p *trainProcess) waitForLog(t *testing.T, re string, limit time.Duration) {
	t.Helper()
	r := regexp.MustCompile(re)
	deadline := time.Now().Add(limit)
	for !r.MatchString(p.logText()) {
		select {
		case <-p.done:
			t.Fatalf("gocaffe ended (exit %d) before its log said %q:\n%s", p.code, re, lastLines(p.logText(), 10))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log did not say %q within %v:\n%s", re, limit, lastLines(p.logText(), 10))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wait waits for the process to end and returns its exit status.
func (p *trainProcess) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
		t.Fatalf("gocaffe still runs %v after the signal:\n%s", limit, lastLines(p.logText(), 10))
		return 0
	}
}

// noCrash fails the test on a stack trace or a runtime death in a log.
func noCrash(t *testing.T, log string) {
	t.Helper()
	for _, bad := range []string{"panic", "goroutine ", "fatal error"} {
		if strings.Contains(log, bad) {
			t.Errorf("log has %q:\n%s", bad, lastLines(log, 20))
		}
	}
}

// SIGTERM (docker stop, Kubernetes, Slurm's preemption, systemd) stops
// training after the iteration in progress with a final snapshot, rather
// than killing it: the exit status is 143, the message names the snapshot
// to resume from, and resuming from it works.
func TestSIGTERMSnapshotsAndStops(t *testing.T) {
	dir := t.TempDir()
	long := writeSolver(t, dir, "term", "max_iter: 100000000 snapshot: 100")
	p := startTrain(t, "train", "-solver", long)
	waitForFile(t, filepath.Join(dir, "term_iter_100.solverstate"), 60*time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := p.wait(t, 60*time.Second)
	log := p.logText()
	noCrash(t, log)
	m := regexp.MustCompile(`stopped by SIGTERM at iteration (\d+); the last snapshot is (\S+): resume with -snapshot (\S+)`).FindStringSubmatch(log)
	if code != exitTerminated || m == nil || !strings.Contains(log, "Caught SIGTERM: stop") {
		t.Fatalf("exit %d (want %d), log:\n%s", code, exitTerminated, lastLines(log, 8))
	}
	iter, _ := strconv.Atoi(m[1])
	want := filepath.Join(dir, "term_iter_"+m[1]+".solverstate")
	if iter <= 100 || m[3] != want {
		t.Errorf("stopped at iteration %d with snapshot %s; want one past 100 with %s", iter, m[3], want)
	}
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("no final snapshot: %v", err)
	}
	code, log = gocaffe(t, "train", "-solver", long, "-snapshot", want, "-iterations", strconv.Itoa(iter+5))
	if code != 0 || !strings.Contains(log, "Restoring previous solver status from "+want) {
		t.Errorf("resume from the SIGTERM snapshot: exit %d:\n%s", code, lastLines(log, 5))
	}
}

// -sigterm_effect takes Caffe's words for the other signals: with
// snapshot, SIGTERM snapshots and training goes on (until SIGINT here);
// a word it does not know is refused before training.
func TestSIGTERMEffect(t *testing.T) {
	dir := t.TempDir()
	long := writeSolver(t, dir, "eff", "max_iter: 100000000 snapshot_after_train: false")
	p := startTrain(t, "train", "-solver", long, "-sigterm_effect", "snapshot")
	p.waitForLog(t, `Iteration 20\b`, 60*time.Second)
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.waitForLog(t, `Snapshotting solver state to binary proto file`, 60*time.Second)
	p.cmd.Process.Signal(syscall.SIGINT)
	if code := p.wait(t, 60*time.Second); code != 0 {
		t.Errorf("exit %d after SIGINT, want 0:\n%s", code, lastLines(p.logText(), 5))
	}
	noCrash(t, p.logText())
	if !strings.Contains(p.logText(), "Caught SIGTERM: snapshot") || !strings.Contains(p.logText(), "Optimization stopped early.") {
		t.Errorf("log:\n%s", lastLines(p.logText(), 10))
	}

	code, log := gocaffe(t, "train", "-solver", long, "-sigterm_effect", "kill")
	if code != 1 || !strings.Contains(log, `-sigterm_effect "kill"`) {
		t.Errorf("bad -sigterm_effect: exit %d:\n%s", code, lastLines(log, 3))
	}
}

// SIGINT in the middle of an iteration of a huge iter_size is obeyed
// between two of its passes, not after all of them (a hundred million
// here), with the snapshot that stopping writes.
func TestSIGINTWithinHugeIterSize(t *testing.T) {
	dir := t.TempDir()
	solverPath := writeSolver(t, dir, "acc", "max_iter: 2 iter_size: 100000000")
	p := startTrain(t, "train", "-solver", solverPath)
	p.waitForLog(t, `Learning Rate Policy`, 60*time.Second)
	time.Sleep(200 * time.Millisecond) // into the first iteration's passes
	p.cmd.Process.Signal(syscall.SIGINT)
	code := p.wait(t, 60*time.Second)
	log := p.logText()
	noCrash(t, log)
	if code != 0 || !strings.Contains(log, "stop requested between its iter_size passes") || !strings.Contains(log, "Optimization stopped early.") {
		t.Errorf("exit %d, log:\n%s", code, lastLines(log, 8))
	}
	if _, err := os.Stat(filepath.Join(dir, "acc_iter_0.solverstate")); err != nil {
		t.Errorf("no snapshot after the stop: %v", err)
	}
}
