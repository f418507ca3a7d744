package cuda_test

import (
	"path/filepath"
	"testing"

	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/settings"
)

// The kernel cache is where SetCacheDir says: a directory, none, or by
// default gocaffe/cuda under the user's cache directory.
func TestSetCacheDir(t *testing.T) {
	t.Cleanup(func() { cuda.SetCacheDir(settings.DefaultCacheDir) })
	dir := t.TempDir()
	cuda.SetCacheDir(settings.CacheDir(dir))
	if got := cuda.CacheDir(); got != dir {
		t.Errorf("CacheDir after SetCacheDir(%q) = %q", dir, got)
	}
	cuda.SetCacheDir(settings.NoCache)
	if got := cuda.CacheDir(); got != "" {
		t.Errorf("CacheDir with the cache off = %q, want none", got)
	}
	cuda.SetCacheDir(settings.DefaultCacheDir)
	if got := cuda.CacheDir(); got != "" && (filepath.Base(got) != "cuda" || filepath.Base(filepath.Dir(got)) != "gocaffe") {
		t.Errorf("default CacheDir = %q, want gocaffe/cuda under the user's cache directory", got)
	}
}
