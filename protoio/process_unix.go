//go:build unix

package protoio

import (
	"errors"
	"syscall"
)

// processRuns reports whether a process with this id exists (signal 0
// checks without sending; EPERM means it exists but is another user's).
func processRuns(pid int) bool {
	if pid <= 0 {
		return true // not a process id: leave the file alone
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
