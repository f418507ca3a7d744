package hdf5

import (
	"bytes"
	"testing"
	"time"
)

// The shuffle filter's element size comes from the file: one of 2^32-1
// bytes for a chunk of 8 leaves the chunk as it is, at once (it looped
// over the element size, found by the fuzz target).
func TestUnshuffleElementLargerThanTheChunk(t *testing.T) {
	b := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	start := time.Now()
	if got := unshuffle(b, 1<<32-1); !bytes.Equal(got, b) || time.Since(start) > time.Second {
		t.Errorf("got %v in %v", got, time.Since(start))
	}
	if got := unshuffle([]byte{1, 3, 2, 4}, 2); !bytes.Equal(got, []byte{1, 2, 3, 4}) {
		t.Errorf("two elements of 2 bytes: %v", got)
	}
}
