// Package mpitest runs a test function as the ranks of an MPI job: the
// test binary starts itself under mpirun, and each rank runs the same test.
package mpitest

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// childEnv marks a process that mpirun started for a test.
const childEnv = "GOCAFFE_MPITEST_CHILD"

// IsRank reports whether this test process is one of the ranks Run started.
func IsRank() bool { return os.Getenv(childEnv) != "" }

// Command returns mpirun running this test binary's test named test (an
// exact name) as np ranks, with the extra environment env. It skips the
// test when mpirun is not installed.
func Command(t *testing.T, np int, test string, env ...string) *exec.Cmd {
	t.Helper()
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun not found (Debian: openmpi-bin); MPI tests skipped")
	}
	args := []string{"-np", strconv.Itoa(np), "--oversubscribe", "--bind-to", "none",
		os.Args[0], "-test.run", "^" + test + "$", "-test.v", "-test.count", "1"}
	cmd := exec.Command(mpirun, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1",
		// Open MPI refuses root without these; CI and containers run as root.
		"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		// Shared memory and TCP on loopback are all a one-machine test needs.
		"OMPI_MCA_btl=self,vader,tcp", "OMPI_MCA_btl_tcp_if_include=lo", "OMPI_MCA_oob_tcp_if_include=lo",
		"OMPI_MCA_btl_vader_single_copy_mechanism=none")
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// Run runs test as np MPI ranks and fails t if the job fails, logging its
// output. In a rank it returns false at once, and the caller goes on to run
// the rank's part of the test.
func Run(t *testing.T, np int, test string, env ...string) (parent bool) {
	t.Helper()
	if IsRank() {
		return false
	}
	out, err := Command(t, np, test, env...).CombinedOutput()
	t.Logf("mpirun -np %d %s:\n%s", np, test, out)
	if err != nil {
		t.Fatalf("mpirun: %v", err)
	}
	return true
}
