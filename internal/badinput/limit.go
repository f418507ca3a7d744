package badinput

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// MemoryLimitKB is the address-space limit (ulimit -v) that the hardening
// tests run their bad inputs under: far below what those inputs ask for,
// so that a reader that trusts them fails the test quickly instead of
// taking the machine's memory.
const MemoryLimitKB = 1500000

// childEnv names the test that a child process started by UnderMemoryLimit
// is to run; only this test helper reads it.
const childEnv = "GOCAFFE_BADINPUT_LIMITED_TEST"

// UnderMemoryLimit runs the calling test again in a child process (the
// test binary itself, -test.run of just that test) under ulimit -v
// MemoryLimitKB, and reports whether the caller is that child: the child
// runs the test's body, the parent only checks that the child passed.
//
//	func TestHugeDataset(t *testing.T) {
//		if !badinput.UnderMemoryLimit(t) {
//			return
//		}
//		... // runs under the limit
//	}
//
// Top-level tests only. Where ulimit is unknown (not Unix) the test is
// skipped.
func UnderMemoryLimit(t *testing.T) bool {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		return true
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs ulimit -v")
	}
	if !startsUnderLimit() {
		t.Skipf("this test binary cannot start under ulimit -v %d (a CUDA build maps its libraries' address space at start); the default build runs this test", MemoryLimitKB)
	}
	script := fmt.Sprintf(`ulimit -v %d && exec "$0" -test.run="^%s\$" -test.v`, MemoryLimitKB, t.Name())
	cmd := exec.Command("sh", "-c", script, os.Args[0])
	// One malloc arena: glibc's 64 MB per thread would otherwise take the
	// address space the limit is about (cgo builds link it).
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name(), "MALLOC_ARENA_MAX=1", "OPENBLAS_NUM_THREADS=1")
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil && diedBeforeTest(out, t.Name()):
		// The runtime (or a library it links, OpenBLAS with its buffers
		// per thread) could not reserve its own address space before the
		// test began: the probe below passed by a small margin. Nothing
		// about the input under test was exercised, so this is a skip.
		t.Skipf("this test binary did not start under ulimit -v %d this time (the runtime's own reservations); the default build runs this test:\n%s", MemoryLimitKB, firstLines(out, 3))
	case err != nil:
		t.Errorf("under ulimit -v %d: %v\n%s", MemoryLimitKB, err, out)
	case !strings.Contains(string(out), "--- PASS: "+t.Name()) && !strings.Contains(string(out), "--- SKIP: "+t.Name()):
		t.Errorf("under ulimit -v %d the test did not run:\n%s", MemoryLimitKB, out)
	}
	return false
}

// startsUnderLimit reports whether the test binary starts at all under the
// limit, asked once: a build linking the CUDA libraries cannot, and the
// test is then left to the default build rather than failing on what the
// runtime itself could not reserve.
var startsUnderLimit = sync.OnceValue(func() bool {
	probe := exec.Command("sh", "-c", fmt.Sprintf(`ulimit -v %d && exec "$0" -test.run='^$'`, MemoryLimitKB), os.Args[0])
	probe.Env = append(os.Environ(), "MALLOC_ARENA_MAX=1", "OPENBLAS_NUM_THREADS=1")
	out, err := probe.CombinedOutput()
	return err == nil || !strings.Contains(string(out), "fatal error")
})

// diedBeforeTest reports whether a child's output shows the runtime dying
// ("fatal error") before the named test started (no "=== RUN" line).
func diedBeforeTest(out []byte, name string) bool {
	text := string(out)
	return strings.Contains(text, "fatal error") && !strings.Contains(text, "=== RUN   "+name)
}

// firstLines returns at most n lines of out.
func firstLines(out []byte, n int) string {
	lines := strings.SplitN(string(out), "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
