//go:build !linux

package sysmem

// collapse is a no-op: only Linux collapses memory into huge pages.
func collapse(b []byte) bool { return false }
