//go:build unix

package mathfn

import "syscall"

// processCPUSeconds is the CPU time (user and system) the process has
// used: on a machine shared with other work, a benchmark's CPU time per
// operation moves less with the others' load than its wall time does.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
