// Package sysmem estimates how much memory the process can still allocate,
// so that a request that cannot fit (a data layer's prefetched batches, for
// instance) is refused with a clear error instead of being found by the
// kernel's out-of-memory killer or by the Go runtime's fatal error; and
// asks for huge pages under large memory read whole again and again
// (HugePages).
package sysmem

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Available returns the bytes this process can still allocate, as far as
// the system says: the smallest of the machine's available memory
// (MemAvailable), the address-space limit (ulimit -v) less the address
// space in use, and the cgroup's memory limit less its usage. limitedBy
// names the smallest. ok is false when nothing is known (not Linux).
func Available() (bytes uint64, limitedBy string, ok bool) {
	consider := func(v uint64, name string) {
		if !ok || v < bytes {
			bytes, limitedBy, ok = v, name, true
		}
	}
	if v, found := memAvailable(); found {
		consider(v, "the machine's available memory")
	}
	if v, found := addressSpaceLeft(); found {
		consider(v, "the address-space limit (ulimit -v)")
	}
	if v, found := cgroupLeft(); found {
		consider(v, "the cgroup's memory limit")
	}
	return bytes, limitedBy, ok
}

// memAvailable reads MemAvailable from /proc/meminfo.
func memAvailable() (uint64, bool) {
	return procKB("/proc/meminfo", "MemAvailable:")
}

// addressSpaceLeft is RLIMIT_AS less VmSize, when a limit is set.
func addressSpaceLeft() (uint64, bool) {
	limit, found := addressSpaceLimit()
	if !found {
		return 0, false
	}
	used, found := procKB("/proc/self/status", "VmSize:")
	if !found || used >= limit {
		return 0, found
	}
	return limit - used, true
}

// cgroupLeft is a cgroup v2 memory.max less memory.current.
func cgroupLeft() (uint64, bool) {
	max, err1 := os.ReadFile("/sys/fs/cgroup/memory.max")
	cur, err2 := os.ReadFile("/sys/fs/cgroup/memory.current")
	if err1 != nil || err2 != nil {
		return 0, false
	}
	m, err1 := strconv.ParseUint(strings.TrimSpace(string(max)), 10, 64)
	c, err2 := strconv.ParseUint(strings.TrimSpace(string(cur)), 10, 64)
	if err1 != nil || err2 != nil { // "max": no limit
		return 0, false
	}
	if c >= m {
		return 0, true
	}
	return m - c, true
}

// procKB reads the "key: N kB" line of a /proc file, in bytes.
func procKB(path, key string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, key) {
			continue
		}
		f := strings.Fields(strings.TrimPrefix(line, key))
		if len(f) == 0 {
			return 0, false
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		return n * 1024, true
	}
	return 0, false
}
