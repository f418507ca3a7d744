//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package lmdb

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"syscall"
)

// canMmap says whether this system maps data files; elsewhere the reader
// falls back to ReadAt.
const canMmap = true

// mmapFile maps size bytes of f read-only and shared, as liblmdb maps a
// read-only environment, so that values are slices of the page cache.
func mmapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || size > math.MaxInt {
		return nil, fmt.Errorf("cannot map %d bytes", size)
	}
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

func munmapFile(b []byte) error { return syscall.Munmap(b) }

// checkLockFree fails when a liblmdb process has the environment open.
// Such a process holds a shared fcntl lock on byte 0 of the lock file
// (mdb_env_excl_lock), so an exclusive lock on it is refused. The lock is
// released at once: holding it would make liblmdb readers wait until the
// writer closes, and they must see each commit.
func checkLockFree(lockPath string) error {
	f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: 0, Len: 1}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
			return fmt.Errorf("%s: the environment is open in another process (its lock is held); close it before writing", lockPath)
		}
		return fmt.Errorf("%s: locking: %w", lockPath, err)
	}
	lk.Type = syscall.F_UNLCK
	return syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk)
}
