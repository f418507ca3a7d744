package sysmem

import "syscall"

// madvCollapse is MADV_COLLAPSE (Linux 6.1), which syscall does not name.
const madvCollapse = 25

// collapse asks for the n bytes at addr (2 MiB aligned) on huge pages.
func collapse(addr, n uintptr) bool {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, addr, n, madvCollapse)
	return errno == 0
}
