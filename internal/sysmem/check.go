package sysmem

import "fmt"

// CheckFrom is the smallest request Check asks the system about: below it
// the answer costs more (three files read from /proc and /sys) than the
// request risks, and a process that cannot find a few megabytes more is
// failing anyway. Callers on a hot path compare with it before they build
// Check's what.
const CheckFrom = 16 << 20

// Check returns an error when n bytes are more than the process can still
// allocate (Available), so that a request read from a file or a net's
// shape is refused before make, whose failure is the Go runtime's fatal
// "out of memory" with no word of what asked. what names the request
// ("dataset /data", "blob of shape [8 1024 1024 1024]"): the error reads
// "<what> needs <n>, but only <m> can be allocated (<the limit>)".
func Check(n uint64, what string) error {
	if n < CheckFrom {
		return nil
	}
	avail, limitedBy, ok := Available()
	if !ok || n <= avail {
		return nil
	}
	return &Error{What: what, Need: n, Available: avail, LimitedBy: limitedBy}
}

// Error is Check's refusal.
type Error struct {
	What      string // what asked
	Need      uint64 // bytes asked for
	Available uint64 // bytes the process could still allocate
	LimitedBy string // the limit that set Available
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s needs %s, but only %s can be allocated (%s)", e.What, Bytes(e.Need), Bytes(e.Available), e.LimitedBy)
}

// Bytes writes a byte count for people: "512 B", "3.0 MiB", "8.0 GiB".
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, 0
	for v >= unit && suffix < 5 {
		v /= unit
		suffix++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[suffix])
}
