//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package lmdb

import (
	"errors"
	"os"
)

// canMmap is false here: the reader reads pages with ReadAt instead.
const canMmap = false

func mmapFile(*os.File, int64) ([]byte, error) {
	return nil, errors.New("memory mapping is not supported on this system")
}

func munmapFile([]byte) error { return nil }

// checkLockFree cannot see liblmdb's fcntl locks here; the writer then
// relies on the caller not to open the environment elsewhere.
func checkLockFree(string) error { return nil }
