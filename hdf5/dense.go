package hdf5

import (
	"encoding/binary"
	"math/bits"
)

// Dense link storage: new-style groups with many links (libver "latest",
// or track_order) keep their link messages as objects of a fractal heap,
// indexed by name hash in a version-2 B-tree. This reads the B-tree's
// records (depth 0 or 1, which holds a few thousand links) and each
// record's object from the heap's direct blocks.

// fractalHeap is what locating a managed object needs.
type fractalHeap struct {
	width             int
	startBlock        uint64
	maxDirectBlock    uint64
	offsetBytes       int // size of a heap offset (block offsets, heap IDs)
	rootAddr          uint64
	rootRows          int
	checksummedBlocks bool
}

func (f *File) readFractalHeap(addr uint64, what string) (*fractalHeap, error) {
	L, O := f.lenSize, f.offSize
	size := 4 + 1 + 2 + 2 + 1 + 4 + L + O + L + O + 8*L + 2 + 2*L + 2 + 2 + O + 2
	b, err := f.readAt(addr, size)
	if err != nil {
		return nil, err
	}
	if string(b[:4]) != "FRHP" || b[4] != 0 {
		return nil, f.errorf("%s: bad fractal heap header", what)
	}
	d := decoder{b: b[5:], f: f}
	d.skip(2) // heap ID length
	if filters := d.u16(); filters != 0 {
		return nil, f.errorf("%s: filtered fractal heaps are not supported", what)
	}
	flags := d.u8()
	d.skip(4 + L + O + L + O + 8*L)
	h := &fractalHeap{checksummedBlocks: flags&0x02 != 0}
	h.width = int(d.u16())
	h.startBlock, h.maxDirectBlock = d.length(), d.length()
	maxHeapBits := int(d.u16())
	d.skip(2) // starting rows
	h.rootAddr = d.addr()
	h.rootRows = int(d.u16())
	h.offsetBytes = (maxHeapBits + 7) / 8
	if d.short || h.width <= 0 || h.startBlock == 0 || h.maxDirectBlock < h.startBlock || h.offsetBytes < 1 || h.offsetBytes > 8 {
		return nil, f.errorf("%s: bad fractal heap header", what)
	}
	return h, nil
}

// blockSize is the size of the blocks of doubling-table row r.
func (h *fractalHeap) blockSize(r int) uint64 {
	if r <= 1 {
		return h.startBlock
	}
	return h.startBlock << uint(r-1)
}

// object returns the bytes from heap offset off to the end of its direct
// block.
func (f *File) heapObject(h *fractalHeap, off uint64, what string) ([]byte, error) {
	blockAddr, blockOff, blockSize := h.rootAddr, uint64(0), h.startBlock
	if h.rootRows > 0 {
		directRows := bits.Len64(h.maxDirectBlock) - bits.Len64(h.startBlock) + 2
		rows := min(h.rootRows, directRows)
		entry := f.offSize
		b, err := f.readAt(h.rootAddr, 5+f.offSize+h.offsetBytes+rows*h.width*entry)
		if err != nil {
			return nil, err
		}
		if string(b[:4]) != "FHIB" {
			return nil, f.errorf("%s: bad fractal heap indirect block", what)
		}
		d := decoder{b: b[5+f.offSize+h.offsetBytes:], f: f}
		found := false
		rowStart := uint64(0)
		for r := range rows {
			size := h.blockSize(r)
			for c := range h.width {
				a := d.addr()
				start := rowStart + uint64(c)*size
				if !found && off >= start && off < start+size {
					blockAddr, blockOff, blockSize, found = a, start, size, true
				}
			}
			rowStart += uint64(h.width) * size
		}
		if !found || blockAddr == undefined {
			return nil, f.errorf("%s: heap offset %d is not in a direct block of the root (deeper heaps are not supported)", what, off)
		}
	}
	if off < blockOff || off >= blockOff+blockSize || blockSize > 1<<24 {
		return nil, f.errorf("%s: heap offset %d outside its block", what, off)
	}
	b, err := f.readAt(blockAddr, int(blockSize))
	if err != nil {
		return nil, err
	}
	if string(b[:4]) != "FHDB" {
		return nil, f.errorf("%s: bad fractal heap direct block", what)
	}
	return b[off-blockOff:], nil
}

// readDenseLinks reads a group's links from its fractal heap and name
// index.
func (f *File) readDenseLinks(g *Group, heapAddr, btreeAddr uint64) error {
	h, err := f.readFractalHeap(heapAddr, "group "+g.path)
	if err != nil {
		return err
	}
	return f.walkBTree2(btreeAddr, "group "+g.path, func(rec []byte) error {
		if len(rec) < 5+h.offsetBytes {
			return f.errorf("group %s: short link name record", g.path)
		}
		id := rec[4:] // after the name hash
		if id[0]&0x30 != 0 {
			return f.errorf("group %s: huge or tiny heap objects are not supported", g.path)
		}
		off := decoder{b: id[1 : 1+h.offsetBytes], f: f}.uintAll()
		obj, err := f.heapObject(h, off, "group "+g.path)
		if err != nil {
			return err
		}
		l, ok, err := parseLink(f, obj)
		if err != nil {
			return f.errorf("group %s: %v", g.path, err)
		}
		if ok {
			g.addrs[l.name] = l.addr
		}
		return nil
	})
}

// walkBTree2 calls rec for every record of a version-2 B-tree of depth 0
// or 1.
func (f *File) walkBTree2(addr uint64, what string, rec func([]byte) error) error {
	b, err := f.readAt(addr, 16+f.offSize+2+f.lenSize+4)
	if err != nil {
		return err
	}
	if string(b[:4]) != "BTHD" {
		return f.errorf("%s: bad version-2 B-tree header", what)
	}
	nodeSize := int(binary.LittleEndian.Uint32(b[6:]))
	recSize := int(binary.LittleEndian.Uint16(b[10:]))
	depth := int(binary.LittleEndian.Uint16(b[12:]))
	d := decoder{b: b[16:], f: f}
	root := d.addr()
	nRoot := int(d.u16())
	if recSize <= 0 || nodeSize <= 10 {
		return f.errorf("%s: bad version-2 B-tree header", what)
	}
	if depth > 1 {
		return f.errorf("%s: a version-2 B-tree of depth %d (a very large group) is not supported", what, depth)
	}
	leaf := func(addr uint64, n int) error {
		b, err := f.readAt(addr, 6+n*recSize)
		if err != nil {
			return err
		}
		if string(b[:4]) != "BTLF" {
			return f.errorf("%s: bad version-2 B-tree leaf", what)
		}
		for i := range n {
			if err := rec(b[6+i*recSize : 6+(i+1)*recSize]); err != nil {
				return err
			}
		}
		return nil
	}
	if depth == 0 {
		return leaf(root, nRoot)
	}
	// The root is internal: nRoot records, then nRoot+1 child pointers of
	// an address and a record count sized for a leaf's capacity.
	maxLeaf := (nodeSize - 10) / recSize
	countBytes := (bits.Len(uint(maxLeaf)) + 7) / 8
	b, err = f.readAt(root, 6+nRoot*recSize+(nRoot+1)*(f.offSize+countBytes))
	if err != nil {
		return err
	}
	if string(b[:4]) != "BTIN" {
		return f.errorf("%s: bad version-2 B-tree internal node", what)
	}
	cd := decoder{b: b[6+nRoot*recSize:], f: f}
	for i := range nRoot + 1 {
		child := cd.addr()
		n := int(cd.uint(countBytes))
		if err := leaf(child, n); err != nil {
			return err
		}
		if i < nRoot {
			if err := rec(b[6+i*recSize : 6+(i+1)*recSize]); err != nil {
				return err
			}
		}
	}
	return nil
}
