package hdf5

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Builder assembles an HDF5 file in memory: groups of datasets, written
// out whole by Bytes or WriteFile.
type Builder struct{ root *WGroup }

// NewBuilder returns a builder holding an empty root group.
func NewBuilder() *Builder { return &Builder{root: &WGroup{members: map[string]any{}}} }

// Root returns the root group.
func (b *Builder) Root() *WGroup { return b.root }

// WGroup is a group being built.
type WGroup struct {
	members map[string]any // *WGroup, *wdataset or *growing
}

// wdataset is a dataset being built: its shape, element type and bytes.
type wdataset struct {
	shape []int
	dtype datatype
	data  []byte
}

func (g *WGroup) add(name string, m any) error {
	if name == "" || name == "." || strings.Contains(name, "/") {
		return fmt.Errorf("hdf5: bad member name %q", name)
	}
	if _, dup := g.members[name]; dup {
		return fmt.Errorf("hdf5: %q already exists", name)
	}
	g.members[name] = m
	return nil
}

// CreateGroup adds a member group.
func (g *WGroup) CreateGroup(name string) (*WGroup, error) {
	c := &WGroup{members: map[string]any{}}
	return c, g.add(name, c)
}

// CreateFloats adds a dataset of float32 or float64 elements (row-major,
// len(data) the product of shape; no dimensions make a scalar).
func CreateFloats[T float32 | float64](g *WGroup, name string, shape []int, data []T) error {
	if err := checkCount(shape, len(data)); err != nil {
		return fmt.Errorf("hdf5: dataset %q: %w", name, err)
	}
	var zero T
	switch any(zero).(type) {
	case float32:
		b := make([]byte, 4*len(data))
		for i, v := range data {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
		}
		return g.add(name, &wdataset{shape: slices.Clone(shape), dtype: datatype{class: Float, size: 4}, data: b})
	default:
		b := make([]byte, 8*len(data))
		for i, v := range data {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(float64(v)))
		}
		return g.add(name, &wdataset{shape: slices.Clone(shape), dtype: datatype{class: Float, size: 8}, data: b})
	}
}

// CreateInt32s adds a dataset of int32 elements.
func (g *WGroup) CreateInt32s(name string, shape []int, data []int32) error {
	if err := checkCount(shape, len(data)); err != nil {
		return fmt.Errorf("hdf5: dataset %q: %w", name, err)
	}
	b := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return g.add(name, &wdataset{shape: slices.Clone(shape), dtype: datatype{class: Integer, size: 4, signed: true}, data: b})
}

// CreateString adds a scalar dataset of one null-terminated string
// (Caffe's hdf5_save_string).
func (g *WGroup) CreateString(name, s string) error {
	b := append([]byte(s), 0)
	return g.add(name, &wdataset{dtype: datatype{class: String, size: len(b)}, data: b})
}

func checkCount(shape []int, n int) error {
	c := 1
	for _, s := range shape {
		if s < 0 {
			return fmt.Errorf("negative dimension in %v", shape)
		}
		c *= s
	}
	if c != n {
		return fmt.Errorf("shape %v holds %d elements, got %d", shape, c, n)
	}
	return nil
}

// File layout constants of what we write (libhdf5's defaults).
const (
	eofAt        = 40 // the superblock's end-of-file address
	offSize      = 8
	lenSize      = 8
	leafK        = 4  // symbol table node: up to 2*leafK entries
	internalK    = 16 // group B-tree node: up to 2*internalK children
	entrySize    = 2*offSize + 24
	snodSize     = 8 + 2*leafK*entrySize
	btreeNodeLen = 8 + 2*offSize + (2*internalK+1)*lenSize + 2*internalK*offSize
	superSize    = 56 + entrySize
)

// encoder appends to the file image.
type encoder struct{ b []byte }

func (e *encoder) at() uint64           { return uint64(len(e.b)) }
func (e *encoder) u8(v uint8)           { e.b = append(e.b, v) }
func (e *encoder) u16(v uint16)         { e.b = binary.LittleEndian.AppendUint16(e.b, v) }
func (e *encoder) u32(v uint32)         { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *encoder) u64(v uint64)         { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *encoder) put64(at, v uint64)   { binary.LittleEndian.PutUint64(e.b[at:], v) }
func (e *encoder) zeros(n int)          { e.b = append(e.b, make([]byte, n)...) }
func (e *encoder) align8()              { e.zeros(int(-len(e.b) & 7)) }
func (e *encoder) raw(p []byte)         { e.b = append(e.b, p...) }
func (e *encoder) str(s string)         { e.b = append(e.b, s...) }
func (e *encoder) reserve(n int) uint64 { at := e.at(); e.zeros(n); return at }

// Bytes returns the file image.
func (b *Builder) Bytes() []byte {
	e := &encoder{}
	e.zeros(superSize)
	root, btree, heap := e.writeGroup(b.root)
	// The superblock (version 0) and the root group's symbol table entry.
	s := &encoder{}
	s.raw(signature)
	s.raw([]byte{0, 0, 0, 0, 0, offSize, lenSize, 0})
	s.u16(leafK)
	s.u16(internalK)
	s.u32(0)         // consistency flags
	s.u64(0)         // base address
	s.u64(undefined) // free-space info
	s.u64(e.at())    // end of file: at eofAt
	s.u64(undefined) // driver info
	s.u64(0)         // root entry: link name offset
	s.u64(root)
	s.u32(1) // cache type: the scratch pad holds the symbol table
	s.u32(0)
	s.u64(btree)
	s.u64(heap)
	copy(e.b, s.b)
	return e.b
}

// writeGroup writes a group's members, then its local heap, symbol table
// nodes, B-tree and object header; it returns the addresses of the header,
// the B-tree and the heap.
func (e *encoder) writeGroup(g *WGroup) (header, btree, heap uint64) {
	names := make([]string, 0, len(g.members))
	for n := range g.members {
		names = append(names, n)
	}
	slices.Sort(names) // symbol table nodes hold names in order
	type entry struct {
		name          string
		nameOff, addr uint64
		btree, heap   uint64 // for groups: the cached scratch pad
	}
	entries := make([]entry, len(names))
	for i, n := range names {
		entries[i].name = n
		switch m := g.members[n].(type) {
		case *WGroup:
			entries[i].addr, entries[i].btree, entries[i].heap = e.writeGroup(m)
		case *wdataset:
			entries[i].addr = e.writeDataset(m)
		case *growing:
			entries[i].addr = e.writeGrowing(m)
		}
	}
	// Local heap: "" at 0, then the names, then one free block (as libhdf5
	// leaves one; its list ends with offset 1).
	var data []byte
	data = append(data, make([]byte, 8)...)
	for i := range entries {
		entries[i].nameOff = uint64(len(data))
		data = append(data, entries[i].name...)
		data = append(data, make([]byte, 8-len(entries[i].name)%8)...)
	}
	freeOff := uint64(len(data))
	data = binary.LittleEndian.AppendUint64(data, 1)
	data = binary.LittleEndian.AppendUint64(data, 16)
	e.align8()
	heap = e.at()
	e.str("HEAP")
	e.raw([]byte{0, 0, 0, 0})
	e.u64(uint64(len(data)))
	e.u64(freeOff)
	e.u64(heap + 32)
	e.raw(data)

	// Symbol table nodes of up to 2*leafK entries each.
	type child struct{ addr, lastKey uint64 }
	var level []child
	for start := 0; start < len(entries); start += 2 * leafK {
		end := min(start+2*leafK, len(entries))
		at := e.at()
		e.str("SNOD")
		e.u8(1)
		e.u8(0)
		e.u16(uint16(end - start))
		for _, en := range entries[start:end] {
			e.u64(en.nameOff)
			e.u64(en.addr)
			if en.btree != 0 {
				e.u32(1)
				e.u32(0)
				e.u64(en.btree)
				e.u64(en.heap)
			} else {
				e.zeros(24)
			}
		}
		e.zeros(snodSize - int(e.at()-at))
		last := uint64(0)
		if end > start {
			last = entries[end-1].nameOff
		}
		level = append(level, child{at, last})
	}
	// B-tree levels of up to 2*internalK children, until one node remains.
	for depth := 0; ; depth++ {
		var next []child
		prevKey := uint64(0)
		var nodes []uint64
		for start := 0; start < len(level) || start == 0; start += 2 * internalK {
			end := min(start+2*internalK, len(level)) // an empty group: one empty node
			at := e.at()
			nodes = append(nodes, at)
			e.str("TREE")
			e.u8(0)
			e.u8(uint8(depth))
			e.u16(uint16(end - start))
			e.u64(undefined) // siblings, filled in below
			e.u64(undefined)
			e.u64(prevKey)
			for _, c := range level[start:end] {
				e.u64(c.addr)
				e.u64(c.lastKey)
			}
			e.zeros(btreeNodeLen - int(e.at()-at))
			if end > start {
				prevKey = level[end-1].lastKey
			}
			next = append(next, child{at, prevKey})
		}
		for i, at := range nodes {
			if i > 0 {
				e.put64(at+8, nodes[i-1])
			}
			if i+1 < len(nodes) {
				e.put64(at+16, nodes[i+1])
			}
		}
		level = next
		if len(level) == 1 {
			break
		}
	}
	btree = level[0].addr
	// The object header: one symbol table message.
	header = e.beginHeader(1, 8+16)
	e.message(msgSymbolTable, 0, func(e *encoder) {
		e.u64(btree)
		e.u64(heap)
	})
	return header, btree, heap
}

// beginHeader starts a version-1 object header of n messages whose
// messages (headers and data) take size bytes.
func (e *encoder) beginHeader(n, size int) uint64 {
	e.align8()
	at := e.at()
	e.u8(1)
	e.u8(0)
	e.u16(uint16(n))
	e.u32(1) // reference count
	e.u32(uint32(size))
	e.u32(0) // alignment
	return at
}

// message writes a version-1 header message whose data body writes, padded
// to 8 bytes.
func (e *encoder) message(typ int, flags uint8, body func(*encoder)) {
	m := &encoder{}
	body(m)
	m.align8()
	e.u16(uint16(typ))
	e.u16(uint16(len(m.b)))
	e.u8(flags)
	e.zeros(3)
	e.raw(m.b)
}

// writeDataset writes a dataset's data and object header (dataspace,
// datatype, fill value, contiguous layout) and returns the header address.
func (e *encoder) writeDataset(d *wdataset) uint64 {
	e.align8()
	dataAddr := undefined
	if len(d.data) > 0 {
		dataAddr = e.at()
		e.raw(d.data)
	}
	msgs := []struct {
		typ   int
		flags uint8
		body  func(*encoder)
	}{
		{msgDataspace, 0, func(m *encoder) {
			m.u8(1)
			m.u8(uint8(len(d.shape)))
			m.u8(1) // maximum dimensions present
			m.zeros(5)
			for _, s := range d.shape {
				m.u64(uint64(s))
			}
			for _, s := range d.shape {
				m.u64(uint64(s))
			}
		}},
		{msgDatatype, 1, func(m *encoder) { encodeDatatype(m, d.dtype) }},
		{0x05, 1, func(m *encoder) { m.raw([]byte{2, 2, 2, 1, 0, 0, 0, 0}) }}, // fill value: default
		{msgLayout, 0, func(m *encoder) {
			m.u8(3)
			m.u8(1) // contiguous
			m.u64(dataAddr)
			m.u64(uint64(len(d.data)))
		}},
	}
	size := 0
	for _, msg := range msgs {
		m := &encoder{}
		msg.body(m)
		size += 8 + (len(m.b)+7)&^7
	}
	at := e.beginHeader(len(msgs), size)
	for _, msg := range msgs {
		e.message(msg.typ, msg.flags, msg.body)
	}
	return at
}

// writeGrowing writes a growing dataset (see Appender): no rows yet, an
// empty chunk B-tree leaf, and an object header whose dataspace has an
// unlimited first dimension and whose layout is chunked (version 3, the
// version-1 B-tree libhdf5 writes by default). It records where the first
// dimension and the B-tree's address lie, which appending rewrites.
func (e *encoder) writeGrowing(g *growing) uint64 {
	e.align8()
	root := e.at()
	e.raw(g.node(0, 0))
	g.levels = [][]uint64{{root}}
	rank := 1 + len(g.rowShape)
	unlimited := append([]uint64{undefined}, make([]uint64, len(g.rowShape))...)
	for i, d := range g.rowShape {
		unlimited[i+1] = uint64(d)
	}
	msgs := []struct {
		typ   int
		flags uint8
		body  func(*encoder)
	}{
		{msgDataspace, 0, func(m *encoder) {
			m.u8(1)
			m.u8(uint8(rank))
			m.u8(1) // maximum dimensions present
			m.zeros(5)
			m.u64(0) // rows: dimsAt
			for _, d := range g.rowShape {
				m.u64(uint64(d))
			}
			for _, d := range unlimited {
				m.u64(d)
			}
		}},
		{msgDatatype, 1, func(m *encoder) { encodeDatatype(m, datatype{class: Float, size: g.elem}) }},
		{0x05, 1, func(m *encoder) { m.raw([]byte{2, 3, 2, 1, 0, 0, 0, 0}) }}, // fill value: default; space allocated incrementally
		{msgLayout, 0, func(m *encoder) {
			m.u8(3)
			m.u8(2) // chunked
			m.u8(uint8(rank + 1))
			m.u64(root) // the chunk B-tree: btreeAt
			m.u32(uint32(g.chunkRows))
			for _, d := range g.rowShape {
				m.u32(uint32(d))
			}
			m.u32(uint32(g.elem))
		}},
	}
	size := 0
	for _, msg := range msgs {
		m := &encoder{}
		msg.body(m)
		size += 8 + (len(m.b)+7)&^7
	}
	at := e.beginHeader(len(msgs), size)
	for _, msg := range msgs {
		switch msg.typ {
		case msgDataspace:
			g.dimsAt = e.at() + 8 + 8 // message header, then version to reserved
		case msgLayout:
			g.btreeAt = e.at() + 8 + 3 // message header, then version, class, rank
		}
		e.message(msg.typ, msg.flags, msg.body)
	}
	return at
}

// encodeDatatype writes a version-1 datatype message: little-endian IEEE
// floats, two's complement integers or null-terminated ASCII strings.
func encodeDatatype(m *encoder, t datatype) {
	m.u8(0x10 | uint8(t.class))
	switch t.class {
	case Float:
		m.raw([]byte{0x20, uint8(8*t.size - 1), 0}) // implied mantissa bit; sign bit position
		m.u32(uint32(t.size))
		m.u16(0)
		m.u16(uint16(8 * t.size))
		if t.size == 4 {
			m.raw([]byte{23, 8, 0, 23})
			m.u32(127)
		} else {
			m.raw([]byte{52, 11, 0, 52})
			m.u32(1023)
		}
	case Integer:
		flags := uint8(0)
		if t.signed {
			flags = 0x08
		}
		m.raw([]byte{flags, 0, 0})
		m.u32(uint32(t.size))
		m.u16(0)
		m.u16(uint16(8 * t.size))
	case String:
		m.raw([]byte{0, 0, 0}) // null-terminated, ASCII
		m.u32(uint32(t.size))
	}
}
