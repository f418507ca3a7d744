//go:build unix

package sysmem

import "syscall"

// addressSpaceLimit is RLIMIT_AS's soft limit when one is set.
func addressSpaceLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || r.Cur == ^uint64(0) {
		return 0, false
	}
	return r.Cur, true
}
