package syncedmem

import "fmt"

// channelsLast is how a device copy of a reduced storage orders its first
// n*c*s elements: n images of s positions of c channels (NHWC), where the
// host copy is row-major (NCHW). Zero means row-major on both.
type channelsLast struct{ n, c, s int }

// SetChannelsLast says that the device copy holds its first n*c*s
// elements channels-last: n images, each of s positions (the product of
// the spatial axes) of c channels, where the host copy holds them
// row-major as Caffe's blobs do; n, c and s all 0 mean row-major on both
// (the default). Copies between host and device reorder the elements;
// nothing moves now. A blob sets it before every access (blob's
// SetChannelsLast), since the memory a net's plan places several blobs in
// holds each blob's shape in turn. Only a reduced storage takes
// channels-last: the layers that compute on it are 16-bit ones.
func (m *SyncedMemory) SetChannelsLast(n, c, s int) error {
	switch {
	case n == 0 && c == 0 && s == 0:
	case n <= 0 || c <= 0 || s <= 0:
		return fmt.Errorf("syncedmem: SetChannelsLast(%d, %d, %d): want positive sizes, or all 0", n, c, s)
	case !m.storage.Reduced():
		return fmt.Errorf("syncedmem: SetChannelsLast: %v storage is row-major only", m.storage)
	case 4*n*c*s > m.size:
		return fmt.Errorf("syncedmem: SetChannelsLast(%d, %d, %d): %d elements, the memory holds %d", n, c, s, n*c*s, m.size/4)
	}
	m.cl = channelsLast{n, c, s}
	return nil
}

// ChannelsLast returns what SetChannelsLast set.
func (m *SyncedMemory) ChannelsLast() (n, c, s int) { return m.cl.n, m.cl.c, m.cl.s }

// toRowMajor reorders the first n*c*s values of a channels-last device
// copy into row-major order (the rest stay).
func (l channelsLast) toRowMajor(v []uint16) {
	if l.n == 0 {
		return
	}
	src := append([]uint16(nil), v[:l.n*l.c*l.s]...)
	for img := range l.n {
		for ch := range l.c {
			row := v[(img*l.c+ch)*l.s:][:l.s]
			for p := range row {
				row[p] = src[(img*l.s+p)*l.c+ch]
			}
		}
	}
}

// toChannelsLast is toRowMajor's inverse.
func (l channelsLast) toChannelsLast(v []uint16) {
	if l.n == 0 {
		return
	}
	src := append([]uint16(nil), v[:l.n*l.c*l.s]...)
	for img := range l.n {
		for ch := range l.c {
			row := src[(img*l.c+ch)*l.s:][:l.s]
			for p, x := range row {
				v[(img*l.s+p)*l.c+ch] = x
			}
		}
	}
}
