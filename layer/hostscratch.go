package layer

import "unsafe"

// HostScratch is host memory that the layers of one net share for values
// that live within one pass of one layer (a convolution's columns and
// per-core weight gradients): a net runs its layers one at a time, so one
// buffer of each kind, as large as the largest layer's, serves them all,
// where each layer keeping its own would hold their sum (tens to hundreds
// of MB in a ResNet-50 training on the host). Each part of a pass that
// runs on several cores takes its own buffer. A net gives its layers one
// (SetHostScratch); a layer without takes buffers of its own. It is not
// safe for concurrent use, as a net is not.
type HostScratch struct {
	bufs map[scratchKey][]byte
}

type scratchKey struct {
	name string
	part int
}

// NewHostScratch returns an empty HostScratch.
func NewHostScratch() *HostScratch {
	return &HostScratch{bufs: map[scratchKey][]byte{}}
}

// Bytes returns the scratch's buffer name of part holding at least n
// bytes (grown as needed, its contents then lost), a slice of n bytes.
func (s *HostScratch) Bytes(name string, part, n int) []byte {
	k := scratchKey{name, part}
	b := s.bufs[k]
	if cap(b) < n {
		b = make([]byte, n)
		s.bufs[k] = b
	}
	return b[:n]
}

// SetHostScratch gives the layer its net's shared scratch (nil: buffers of
// its own).
func (b *Base[T]) SetHostScratch(s *HostScratch) { b.hostScratch = s }

// ScratchOf returns n elements of scratch for part of a pass of the
// layer: its net's shared buffer name (HostScratch), or *own, grown as
// needed, for a layer without one. Its contents are whatever the last
// user left. Call it on the pass's goroutine before its parts start.
func ScratchOf[T Float](b *Base[T], name string, part int, own *[]T, n int) []T {
	if b.hostScratch == nil || n == 0 {
		if cap(*own) < n {
			*own = make([]T, n)
		}
		*own = (*own)[:n]
		return *own
	}
	var zero T
	p := b.hostScratch.Bytes(name, part, n*int(unsafe.Sizeof(zero)))
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(p))), n)
}
