package hdf5

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/gocaffe/gocaffe/internal/sysmem"
)

// Filter identifiers.
const (
	filterDeflate    = 1
	filterShuffle    = 2
	filterFletcher32 = 3
)

type filter struct {
	id     int
	client []uint32
}

// chunked describes chunked storage.
type chunked struct {
	dims     []int // chunk dimensions (without the element size)
	index    int   // layout v4 index type; 0 for a version-1 B-tree
	addr     uint64
	filtSize uint64 // single chunk: its filtered size
	filtMask uint32
	filtered bool
}

// layout is a decoded layout message: where the dataset's elements are.
type layout struct {
	compact   []byte // compact storage: the elements themselves
	isCompact bool
	addr      uint64   // contiguous storage; undefined when never written
	ch        *chunked // chunked storage
}

// parseLayout decodes the layout message; it reads nothing else.
func (d *Dataset) parseLayout() (layout, error) {
	var l layout
	b := d.header.layout
	if len(b) < 2 {
		return l, d.errorf("short layout message")
	}
	dec := decoder{b: b, f: d.f}
	version := dec.u8()
	switch version {
	case 1, 2:
		ndims := int(dec.u8())
		class := dec.u8()
		dec.skip(5)
		if class != 0 {
			l.addr = dec.addr()
		}
		dims := make([]int, ndims)
		for i := range dims {
			dims[i] = int(dec.u32())
		}
		switch class {
		case 0:
			l.isCompact = true
			l.compact = dec.bytes(int(dec.u32()))
		case 2:
			if ndims < 2 {
				return l, d.errorf("chunked layout of %d dimensions", ndims)
			}
			l.ch = &chunked{dims: dims[:len(dims)-1], addr: l.addr}
		}
	case 3, 4, 5:
		// Version 5 (HDF5 2.0) has version 4's wire format; it only
		// promises that filtered chunk sizes in the chunk index take
		// sizeof_size bytes, which the index readers take from the
		// index itself (the single-chunk size below, the fixed
		// array's entry size).
		switch class := dec.u8(); class {
		case 0:
			l.isCompact = true
			l.compact = dec.bytes(int(dec.u16()))
		case 1:
			l.addr = dec.addr()
		case 2:
			var err error
			if l.ch, err = parseChunkLayout(&dec, version); err != nil {
				return l, d.errorf("%v", err)
			}
		default:
			return l, d.errorf("layout class %d (virtual datasets) is not supported", class)
		}
	default:
		return l, d.errorf("layout message version %d is not supported", version)
	}
	if dec.short {
		return l, d.errorf("short layout message")
	}
	return l, nil
}

// neverWritten reports whether the dataset is contiguous and was never
// written: every element is the fill value, 0.
func (l layout) neverWritten(size int) bool {
	return !l.isCompact && l.ch == nil && (size == 0 || l.addr == undefined)
}

// CheckStorage checks, from the dataset's layout alone, that the file can
// hold what its dataspace and datatype promise, so that a caller can
// check before it allocates for the dataset: compact data of the full
// size, contiguous data inside the file, chunks of a size HDF5 allows
// (under 4 GiB) and, where their places follow from the layout, inside the
// file. A dataset never written (all fill value) passes, and so does one
// of chunks written only in part: their size is real, and only the memory
// the process may have bounds it.
func (d *Dataset) CheckStorage() error {
	l, err := d.parseLayout()
	if err != nil {
		return err
	}
	return d.checkLayout(l)
}

func (d *Dataset) checkLayout(l layout) error {
	size, _ := d.bytes()
	switch {
	case l.isCompact:
		if len(l.compact) < size {
			return d.errorf("compact data of %d bytes; its %v elements of %d bytes need %d", len(l.compact), d.shape, d.dtype.size, size)
		}
	case l.ch == nil:
		if !l.neverWritten(size) && !d.f.holds(l.addr, uint64(size)) {
			return d.errorf("%v elements of %d bytes (%d bytes at %d) run past the end of the file%s: truncated or corrupt",
				d.shape, d.dtype.size, size, l.addr, d.f.sizeNote())
		}
	default:
		return d.checkChunks(l.ch)
	}
	return nil
}

// checkChunks checks the chunk dimensions and, for the indexes that place
// the chunks without saying so (a single chunk, an implicit index), that
// the file holds them.
func (d *Dataset) checkChunks(ch *chunked) error {
	if len(ch.dims) != len(d.shape) {
		return d.errorf("chunks of %d dimensions for a dataset of %d", len(ch.dims), len(d.shape))
	}
	chunkBytes, ok := ch.bytes(d.dtype.size)
	if !ok {
		return d.errorf("bad chunk dimensions %v (a chunk holds under 4 GiB)", ch.dims)
	}
	var stored uint64
	switch ch.index {
	case 1:
		stored = uint64(chunkBytes)
		if ch.filtered {
			stored = ch.filtSize
		}
	case 2:
		n, ok := d.chunkCount(ch.dims)
		if !ok || n > math.MaxInt64/uint64(chunkBytes) {
			return d.errorf("%d chunks of %d bytes overflow a 64-bit size", n, chunkBytes)
		}
		stored = n * uint64(chunkBytes)
	default:
		return nil // the index says where each chunk is, and readAt checks
	}
	if !d.f.holds(ch.addr, stored) {
		return d.errorf("chunks of %d bytes at %d run past the end of the file%s: truncated or corrupt", stored, ch.addr, d.f.sizeNote())
	}
	return nil
}

// bytes is the size of one chunk; ok is false for dimensions HDF5 cannot
// write (a chunk holds less than 4 GiB).
func (ch *chunked) bytes(elemSize int) (int, bool) {
	n := elemSize
	for _, c := range ch.dims {
		if c <= 0 || n > (1<<32-1)/c {
			return 0, false
		}
		n *= c
	}
	return n, true
}

// raw returns the dataset's elements in their stored type, row-major.
func (d *Dataset) raw() ([]byte, error) {
	size, _ := d.bytes()
	l, err := d.parseLayout()
	if err != nil {
		return nil, err
	}
	if err := d.checkLayout(l); err != nil {
		return nil, err
	}
	switch {
	case l.isCompact:
		return l.compact[:size], nil
	case l.ch != nil:
		return d.readChunked(l.ch, size)
	}
	if err := d.checkMemory(uint64(size)); err != nil {
		return nil, err
	}
	if l.neverWritten(size) {
		return make([]byte, size), nil
	}
	return d.f.readAt(l.addr, size)
}

// checkMemory refuses to allocate n bytes for the dataset when the process
// cannot have them.
func (d *Dataset) checkMemory(n uint64) error {
	if err := sysmem.Check(n, fmt.Sprintf("reading its %v elements of %d bytes", d.shape, d.dtype.size)); err != nil {
		return d.errorf("%v", err)
	}
	return nil
}

// parseChunkLayout reads the chunked part of a version 3, 4 or 5 layout
// message.
func parseChunkLayout(dec *decoder, version uint8) (*chunked, error) {
	ch := &chunked{}
	if version == 3 {
		ndims := int(dec.u8())
		ch.addr = dec.addr()
		for range ndims {
			ch.dims = append(ch.dims, int(dec.u32()))
		}
		if ndims < 2 {
			return nil, errorString("chunked layout of %d dimensions", ndims)
		}
		ch.dims = ch.dims[:len(ch.dims)-1] // the last is the element size
		return ch, nil
	}
	flags := dec.u8()
	ndims := int(dec.u8())
	enc := int(dec.u8())
	for range ndims {
		ch.dims = append(ch.dims, int(dec.uint(enc)))
	}
	if ndims < 2 || enc < 1 || enc > 8 {
		return nil, errorString("chunked layout of %d dimensions, %d-byte sizes", ndims, enc)
	}
	ch.dims = ch.dims[:len(ch.dims)-1]
	ch.index = int(dec.u8())
	switch ch.index {
	case 1: // single chunk
		if flags&0x02 != 0 {
			ch.filtered = true
			ch.filtSize = dec.length()
			ch.filtMask = dec.u32()
		}
	case 2: // implicit
	case 3: // fixed array
		dec.skip(1)
	case 4:
		return nil, errorString("chunks indexed by an extensible array (a resizable dataset written with libver 'latest') are not supported")
	case 5:
		return nil, errorString("chunks indexed by a version-2 B-tree (written with libver 'latest') are not supported")
	default:
		return nil, errorString("chunk index type %d is not supported", ch.index)
	}
	ch.addr = dec.addr()
	return ch, nil
}

// parseFilters decodes a filter pipeline message (versions 1 and 2).
func parseFilters(b []byte) ([]filter, error) {
	dec := decoder{b: b}
	version := dec.u8()
	n := int(dec.u8())
	if version == 1 {
		dec.skip(6)
	} else if version != 2 {
		return nil, errorString("filter pipeline version %d is not supported", version)
	}
	var out []filter
	for range n {
		f := filter{id: int(dec.u16())}
		nameLen := 0
		if version == 1 || f.id >= 256 {
			nameLen = int(dec.u16())
		}
		dec.u16() // flags
		nvals := int(dec.u16())
		if version == 1 {
			nameLen = (nameLen + 7) &^ 7
		}
		dec.skip(nameLen)
		for range nvals {
			f.client = append(f.client, dec.u32())
		}
		if version == 1 && nvals%2 == 1 {
			dec.skip(4)
		}
		out = append(out, f)
	}
	if dec.short {
		return nil, errorString("short filter pipeline message")
	}
	return out, nil
}

// chunkRef is one stored chunk: its offset in elements, address, stored
// size and filter mask.
type chunkRef struct {
	offset []int
	addr   uint64
	size   uint64
	mask   uint32
}

func (d *Dataset) readChunked(ch *chunked, size int) ([]byte, error) {
	var filters []filter
	if d.header.filters != nil {
		var err error
		if filters, err = parseFilters(d.header.filters); err != nil {
			return nil, d.errorf("%v", err)
		}
		for _, f := range filters {
			if f.id != filterDeflate && f.id != filterShuffle && f.id != filterFletcher32 {
				return nil, d.errorf("filter %d is not supported (only deflate, shuffle and fletcher32)", f.id)
			}
		}
	}
	chunkBytes, _ := ch.bytes(d.dtype.size) // checkChunks checked it
	refs, err := d.chunkRefs(ch, chunkBytes)
	if err != nil {
		return nil, err
	}
	// The index names each chunk once in a file libhdf5 wrote; more
	// entries than the dataset has chunks would make a crafted file's
	// reading cost more than its size.
	if n, _ := d.chunkCount(ch.dims); uint64(len(refs)) > n {
		return nil, d.errorf("the chunk index lists %d chunks; the dataset has %d", len(refs), n)
	}
	// The most a chunk's filters may give back: its elements, and a
	// Fletcher-32 checksum per Fletcher-32 filter still to be undone.
	// Chunks may be larger than the dataset (libhdf5 allows chunk
	// dimensions beyond the extent), and unfiltering one takes two
	// buffers of its size beside the output.
	maxUnfiltered := chunkBytes + 4*len(filters)
	if err := d.checkMemory(uint64(size) + 2*uint64(maxUnfiltered)); err != nil {
		return nil, err
	}
	out := make([]byte, size)
	for _, r := range refs {
		for i, o := range r.offset {
			if o < 0 || o >= max(d.shape[i], 1) || o%ch.dims[i] != 0 {
				return nil, d.errorf("chunk offset %v outside the dataset's %v", r.offset, d.shape)
			}
		}
		if r.size > 1<<31 {
			return nil, d.errorf("chunk at %v of %d bytes", r.offset, r.size)
		}
		stored, err := d.f.readAt(r.addr, int(r.size))
		if err != nil {
			return nil, err
		}
		data, err := unfilter(stored, filters, r.mask, d.dtype.size, maxUnfiltered)
		if err != nil {
			return nil, d.errorf("chunk at %v: %v", r.offset, err)
		}
		if len(data) < chunkBytes {
			return nil, d.errorf("chunk at %v holds %d bytes, want %d", r.offset, len(data), chunkBytes)
		}
		d.copyChunk(out, data, r.offset, ch.dims)
	}
	return out, nil
}

// chunkRefs lists the stored chunks from the chunk index.
func (d *Dataset) chunkRefs(ch *chunked, chunkBytes int) ([]chunkRef, error) {
	rank := len(d.shape)
	switch ch.index {
	case 0:
		var refs []chunkRef
		keySize := 8 + 8*(rank+1)
		err := d.f.walkBTree1(ch.addr, 1, keySize, "dataset "+d.path, func(child uint64, key []byte) error {
			kd := decoder{b: key, f: d.f}
			r := chunkRef{addr: child, size: uint64(kd.u32()), mask: kd.u32()}
			for range rank {
				r.offset = append(r.offset, int(kd.uint(8)))
			}
			refs = append(refs, r)
			return nil
		})
		return refs, err
	case 1:
		size := uint64(chunkBytes)
		if ch.filtered {
			size = ch.filtSize
		}
		return []chunkRef{{offset: make([]int, rank), addr: ch.addr, size: size, mask: ch.filtMask}}, nil
	case 2:
		var refs []chunkRef
		for i, off := range d.chunkGrid(ch.dims) {
			refs = append(refs, chunkRef{offset: off, addr: ch.addr + uint64(i*chunkBytes), size: uint64(chunkBytes)})
		}
		return refs, nil
	case 3:
		return d.fixedArrayChunks(ch, chunkBytes)
	}
	return nil, d.errorf("chunk index type %d is not supported", ch.index)
}

// chunkCount is the number of chunks of the given dimensions that cover
// the dataset; ok is false when it overflows.
func (d *Dataset) chunkCount(dims []int) (n uint64, ok bool) {
	n = 1
	for i, s := range d.shape {
		c := uint64((s + dims[i] - 1) / dims[i])
		if c != 0 && n > math.MaxInt64/c {
			return 0, false
		}
		n *= c
	}
	return n, true
}

// chunkGrid lists the offsets of every chunk in row-major order. The
// callers check first that the file holds that many chunks.
func (d *Dataset) chunkGrid(dims []int) [][]int {
	rank := len(d.shape)
	counts := make([]int, rank)
	total := 1
	for i := range counts {
		counts[i] = (d.shape[i] + dims[i] - 1) / dims[i]
		total *= counts[i]
	}
	out := make([][]int, 0, total)
	for lin := range total {
		off := make([]int, rank)
		for i, r := rank-1, lin; i >= 0; i-- {
			off[i] = r % counts[i] * dims[i]
			r /= counts[i]
		}
		out = append(out, off)
	}
	return out
}

// fixedArrayChunks reads an unpaged fixed-array chunk index.
func (d *Dataset) fixedArrayChunks(ch *chunked, chunkBytes int) ([]chunkRef, error) {
	f := d.f
	head, err := f.readAt(ch.addr, 8+f.lenSize+f.offSize+4)
	if err != nil {
		return nil, err
	}
	if string(head[:4]) != "FAHD" {
		return nil, d.errorf("bad fixed array header")
	}
	client, entrySize, pageBits := head[5], int(head[6]), head[7]
	hd := decoder{b: head[8:], f: f}
	n := hd.length()
	block := hd.addr()
	if n > 1<<uint(pageBits) {
		return nil, d.errorf("paged fixed-array chunk index (%d chunks) is not supported", n)
	}
	if want, _ := d.chunkCount(ch.dims); n != want {
		return nil, d.errorf("fixed array holds %d chunks, want %d", n, want)
	}
	prefix := 6 + f.offSize
	if entrySize <= 0 || n > uint64(math.MaxInt32/entrySize) {
		return nil, d.errorf("fixed array of %d entries of %d bytes", n, entrySize)
	}
	b, err := f.readAt(block, prefix+int(n)*entrySize)
	if err != nil {
		return nil, err
	}
	grid := d.chunkGrid(ch.dims) // as many as the entries just read
	if string(b[:4]) != "FADB" {
		return nil, d.errorf("bad fixed array data block")
	}
	ed := decoder{b: b[prefix:], f: f}
	var refs []chunkRef
	for i := range grid {
		r := chunkRef{offset: grid[i], addr: ed.addr(), size: uint64(chunkBytes)}
		if client == 1 {
			r.size = ed.uint(entrySize - f.offSize - 4)
			r.mask = ed.u32()
		}
		if r.addr != undefined {
			refs = append(refs, r)
		}
	}
	return refs, nil
}

// unfilter undoes the filters (in reverse order), skipping those whose
// bit is set in mask. No step may give more than limit bytes: a deflate
// stream of 3 MB can inflate to 3 GB.
func unfilter(b []byte, filters []filter, mask uint32, elemSize, limit int) ([]byte, error) {
	for i := len(filters) - 1; i >= 0; i-- {
		if mask&(1<<uint(i)) != 0 {
			continue
		}
		switch filters[i].id {
		case filterDeflate:
			var err error
			if b, err = inflate(b, limit); err != nil {
				return nil, err
			}
		case filterShuffle:
			size := elemSize
			if len(filters[i].client) > 0 {
				size = int(filters[i].client[0])
			}
			b = unshuffle(b, size)
		case filterFletcher32:
			if len(b) < 4 {
				return nil, errorString("fletcher32 chunk of %d bytes", len(b))
			}
			if sum, want := fletcher32(b[:len(b)-4]), binary.LittleEndian.Uint32(b[len(b)-4:]); sum != want {
				return nil, errorString("fletcher32 checksum mismatch")
			}
			b = b[:len(b)-4]
		}
	}
	return b, nil
}

// inflate undoes the deflate filter, refusing output of more than limit
// bytes before reading past it.
func inflate(b []byte, limit int) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	// One byte more than the limit tells a stream that goes on. The
	// buffer grows with what the stream gives, not with the limit: a
	// chunk may be declared 4 GiB and hold ten bytes.
	out, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(out) > limit {
		return nil, errorString("deflated data of %d bytes inflates to more than the %d bytes a chunk holds", len(b), limit)
	}
	return out, nil
}

// unshuffle undoes the shuffle filter: byte j of every element was stored
// together.
func unshuffle(b []byte, size int) []byte {
	// An element larger than the chunk is not shuffled (libhdf5 does
	// the same), and the size comes from the file: looping over it
	// for a chunk too short to hold one element would spin for up to
	// 2^32 turns.
	if size <= 1 || size > len(b) {
		return b
	}
	n := len(b) / size
	out := make([]byte, len(b))
	for j := range size {
		for i := range n {
			out[i*size+j] = b[j*n+i]
		}
	}
	copy(out[n*size:], b[n*size:])
	return out
}

// fletcher32 is libhdf5's Fletcher-32 over 16-bit big-endian words (an odd
// last byte is the high byte of a word).
func fletcher32(b []byte) uint32 {
	var s1, s2 uint32
	for i := 0; i+1 < len(b); i += 2 {
		s1 += uint32(b[i])<<8 | uint32(b[i+1])
		s1 %= 65535
		s2 += s1
		s2 %= 65535
	}
	if len(b)%2 == 1 {
		s1 += uint32(b[len(b)-1]) << 8
		s1 %= 65535
		s2 += s1
		s2 %= 65535
	}
	return s2<<16 | s1
}

// copyChunk copies a chunk's elements that lie inside the dataset into out.
func (d *Dataset) copyChunk(out, chunk []byte, offset, dims []int) {
	rank := len(d.shape)
	es := d.dtype.size
	if rank == 0 {
		copy(out, chunk[:es])
		return
	}
	// Rows along the last dimension are contiguous in both.
	rowLen := min(dims[rank-1], d.shape[rank-1]-offset[rank-1])
	if rowLen <= 0 {
		return
	}
	idx := make([]int, rank-1) // position in the chunk, outer dimensions
	for {
		inside := true
		src, dst := 0, 0
		for i := range rank - 1 {
			g := offset[i] + idx[i]
			if g >= d.shape[i] {
				inside = false
				break
			}
			src = src*dims[i] + idx[i]
			dst = dst*d.shape[i] + g
		}
		if inside {
			src = src * dims[rank-1]
			dst = dst*d.shape[rank-1] + offset[rank-1]
			copy(out[dst*es:(dst+rowLen)*es], chunk[src*es:(src+rowLen)*es])
		}
		i := rank - 2
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}
