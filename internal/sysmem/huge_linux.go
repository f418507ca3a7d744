package sysmem

import "golang.org/x/sys/unix"

// collapse asks for the memory of b (whole 2 MiB pages) on huge pages
// (MADV_COLLAPSE, Linux 6.1).
func collapse(b []byte) bool { return unix.Madvise(b, unix.MADV_COLLAPSE) == nil }
