package cuda

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/gocaffe/gocaffe/settings"
)

// The compiled-kernel cache is the process's, not a context's: its entries
// are keyed by what makes a CUBIN (source, options, architecture, driver),
// so every net of the process agrees on what an entry holds, and only where
// the entries live is a choice, made once like Go's own GOCACHE.
var (
	cacheMu  sync.Mutex
	cacheSet settings.CacheDir // see SetCacheDir
)

// SetCacheDir sets where compiled kernels are cached from now on: the
// settings' CUDACache (GOCAFFE_CUDA_CACHE for the gocaffe command) is a
// directory, settings.DefaultCacheDir for gocaffe/cuda under the user's
// cache directory (the default), or settings.NoCache for none.
func SetCacheDir(dir settings.CacheDir) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	cacheSet = dir
}

// CacheDir returns the directory of the compiled-kernel cache, or "" when
// the cache is off.
func CacheDir() string {
	cacheMu.Lock()
	dir := cacheSet
	cacheMu.Unlock()
	switch dir {
	case settings.NoCache:
		return ""
	case settings.DefaultCacheDir:
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(base, "gocaffe", "cuda")
	}
	return string(dir)
}
