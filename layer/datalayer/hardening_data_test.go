package datalayer_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gocaffe/gocaffe/internal/badinput"
	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// TestDataTruncatedLMDB: an LMDB data file truncated while a Data layer
// reads it through its memory map (SIGBUS on the next page touched, which
// kills a process) fails Forward with an error naming the database, with
// and without prefetching.
func TestDataTruncatedLMDB(t *testing.T) {
	defer func(old caffepb.DataParameter_DB) { testBackend = old }(testBackend)
	testBackend = caffepb.DataParameter_LMDB
	for _, prefetch := range []string{"prefetch: 0", "prefetch: 1"} {
		src := writeDatums(t, numbered(2000, 3, 8, 8)) // about 400 KB: many pages
		l, top := setUpSource[float32](t, dataText(src, "batch_size: 4 "+prefetch, ""), 1, 2)
		// Keep the meta pages, cut away every record page.
		if err := os.Truncate(filepath.Join(src, "data.mdb"), 2*4096); err != nil {
			t.Fatal(err)
		}
		var err error
		for i := 0; i < 600 && err == nil; i++ {
			_, err = layer.Forward(l, nil, top)
		}
		wantError(t, prefetch, err, `layer "Data" (Data)`, src, "memory-mapped", "truncated")
	}
}

// TestDataBatchMemoryChecked: a batch_size x prefetch that cannot fit in
// the memory the process can allocate is refused at setup with the sizes,
// instead of being found by the kernel.
func TestDataBatchMemoryChecked(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		src := writeDatums(t, numbered(2, 3, 8, 8))
		err := setUpError(t, dataText(src, "batch_size: 10000000 prefetch: 40", ""), 2)
		wantError(t, "huge batch", err, `layer "Data" (Data)`, "batches of shape [10000000 3 8 8]", "can be allocated", "lower batch_size or data_param.prefetch")
	})
}

// TestImageDataRefusesDecompressionBomb: a valid 389 KB PNG of 20000x20000
// pixels is refused from its header, before any pixel memory is allocated;
// a cap raised in the reader lets small images through.
func TestImageDataRefusesDecompressionBomb(t *testing.T) {
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.png")
	if err := os.WriteFile(bomb, badinput.PNGBomb(20000, 20000), 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte(bomb+" 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := setUpError(t, `type: "ImageData" image_data_param { source: "`+list+`" batch_size: 1 }`, 2)
	wantError(t, "bomb", err, `layer "ImageData" (ImageData)`, bomb, "20000x20000", "over the limit", "GOCAFFE_MAX_IMAGE_PIXELS")
}
