package cuda

import (
	"os"
	"path/filepath"
)

// CacheDir returns the directory of the compiled-kernel cache, or "" when
// the cache is off.
func CacheDir() string {
	dir := os.Getenv("GOCAFFE_CUDA_CACHE")
	if dir == "off" {
		return ""
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(base, "gocaffe", "cuda")
	}
	return dir
}
