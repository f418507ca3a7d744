package lmdb

import (
	"encoding/binary"
	"fmt"
)

// LMDB's on-disk format as liblmdb 0.9 (mdb.c) writes it on 64-bit
// little-endian builds, the only kind Caffe's LMDB datasets come from.
// Every multi-byte field is little-endian; page numbers (pgno_t) and
// sizes (size_t) are 8 bytes.
//
// A data file is an array of pages of one size. Pages 0 and 1 are meta
// pages; the valid one with the larger transaction id describes the
// current snapshot. Every other page belongs to a B+tree (branch and leaf
// pages), to an overflow run holding one large value, or is free.

const (
	mdbMagic       = 0xBEEFC0DE // MDB_MAGIC
	mdbDataVersion = 1          // MDB_DATA_VERSION of release builds (MDB_DEVEL uses 999)

	// pageHeaderSize is PAGEHDRSZ: pgno u64, pad u16, flags u16, then
	// lower u16 and upper u16, which an overflow page reads together as
	// its u32 page count.
	pageHeaderSize = 16
	// nodeHeaderSize is NODESIZE: lo u16, hi u16, flags u16, ksize u16.
	nodeHeaderSize = 8

	pageBranch   = 0x01 // P_BRANCH
	pageLeaf     = 0x02 // P_LEAF
	pageOverflow = 0x04 // P_OVERFLOW
	pageMeta     = 0x08 // P_META
	pageLeaf2    = 0x20 // P_LEAF2: DUPFIXED sub-databases only

	nodeBigData = 0x01 // F_BIGDATA: data is the pgno of an overflow run
	nodeSubData = 0x02 // F_SUBDATA: data is a named or dup sub-database
	nodeDupData = 0x04 // F_DUPDATA: data holds duplicates

	dbDupSort    = 0x04 // MDB_DUPSORT
	dbIntegerKey = 0x08 // MDB_INTEGERKEY, always set on the free DB

	freeDBI  = 0 // FREE_DBI: the free-page database
	mainDBI  = 1 // MAIN_DBI: the unnamed database Caffe uses
	coreDBs  = 2 // CORE_DBS: the MDB_db records in a meta page
	numMetas = 2 // NUM_METAS: meta pages 0 and 1

	invalidPgno = ^uint64(0) // P_INVALID: the root of an empty tree

	// maxKeySize is MDB_MAXKEYSIZE of release builds.
	maxKeySize = 511
	// maxDataSize is MAXDATASIZE: node data sizes are 32 bits.
	maxDataSize = 0xffffffff
	// maxDepth is CURSOR_STACK, the deepest tree liblmdb walks.
	maxDepth = 32
	// minKeys is MDB_MINKEYS, which sets the node size limit.
	minKeys = 2

	// defaultPageSize is the page size liblmdb picks on Linux x86-64 and
	// arm64 with 4 KiB pages, used for new databases.
	defaultPageSize = 4096

	// metaOffset is where MDB_meta starts in a meta page; metaSize its
	// length: magic, version, address, mapsize, 2 MDB_db, last_pg, txnid.
	metaOffset = pageHeaderSize
	metaSize   = 4 + 4 + 8 + 8 + coreDBs*treeInfoSize + 8 + 8
	// treeInfoSize is sizeof(MDB_db): pad u32, flags u16, depth u16, then
	// branch, leaf and overflow page counts, entries and root, 8 bytes each.
	treeInfoSize = 48
)

var le = binary.LittleEndian

// nodeMax is me_nodemax: a leaf node (header, key and value) bigger than
// this has its value moved to an overflow run, which keeps at least
// MDB_MINKEYS nodes per page.
func nodeMax(psize int) int {
	return ((psize-pageHeaderSize)/minKeys)&^1 - 2
}

// overflowPages is OVPAGES: the pages of a run holding size bytes after
// the first page's header.
func overflowPages(size, psize uint64) uint64 {
	return (pageHeaderSize-1+size)/psize + 1
}

// even is EVEN: nodes start on 2-byte boundaries.
func even(n int) int { return (n + 1) &^ 1 }

// treeInfo is MDB_db, the description of one B+tree in a meta page.
type treeInfo struct {
	pad           uint32 // page size, in the free DB's record
	flags         uint16
	depth         uint16
	branchPages   uint64
	leafPages     uint64
	overflowPages uint64
	entries       uint64
	root          uint64
}

func decodeTreeInfo(b []byte) treeInfo {
	return treeInfo{
		pad:           le.Uint32(b[0:]),
		flags:         le.Uint16(b[4:]),
		depth:         le.Uint16(b[6:]),
		branchPages:   le.Uint64(b[8:]),
		leafPages:     le.Uint64(b[16:]),
		overflowPages: le.Uint64(b[24:]),
		entries:       le.Uint64(b[32:]),
		root:          le.Uint64(b[40:]),
	}
}

func (t treeInfo) encode(b []byte) {
	le.PutUint32(b[0:], t.pad)
	le.PutUint16(b[4:], t.flags)
	le.PutUint16(b[6:], t.depth)
	le.PutUint64(b[8:], t.branchPages)
	le.PutUint64(b[16:], t.leafPages)
	le.PutUint64(b[24:], t.overflowPages)
	le.PutUint64(b[32:], t.entries)
	le.PutUint64(b[40:], t.root)
}

// envMeta is MDB_meta.
type envMeta struct {
	magic, version uint32
	address        uint64 // only for MDB_FIXEDMAP; always 0 here
	mapSize        uint64
	dbs            [coreDBs]treeInfo // free DB, main DB
	lastPg         uint64            // last page used by this snapshot
	txnID          uint64
}

// pageSize is mm_psize, kept in the free DB's pad.
func (m *envMeta) pageSize() uint32 { return m.dbs[freeDBI].pad }

// decodeMeta reads the MDB_meta of a meta page; p holds at least
// metaOffset+metaSize bytes.
func decodeMeta(p []byte) envMeta {
	b := p[metaOffset:]
	m := envMeta{
		magic:   le.Uint32(b[0:]),
		version: le.Uint32(b[4:]),
		address: le.Uint64(b[8:]),
		mapSize: le.Uint64(b[16:]),
	}
	for i := range m.dbs {
		m.dbs[i] = decodeTreeInfo(b[24+i*treeInfoSize:])
	}
	tail := b[24+coreDBs*treeInfoSize:]
	m.lastPg = le.Uint64(tail[0:])
	m.txnID = le.Uint64(tail[8:])
	return m
}

// checkMeta tells why a decoded meta page cannot be used.
func checkMeta(p []byte, m *envMeta) error {
	if m.magic != mdbMagic {
		return fmt.Errorf("not an LMDB data file: magic %#x, want %#x", m.magic, uint32(mdbMagic))
	}
	if m.version != mdbDataVersion {
		return fmt.Errorf("LMDB data format version %d, want %d", m.version, mdbDataVersion)
	}
	if f := pageFlags(p); f&pageMeta == 0 {
		return fmt.Errorf("meta page has flags %#x, want P_META %#x", f, pageMeta)
	}
	return nil
}

// encodeMetaPage fills page p (zeroed, one page long) as meta page pgno.
func encodeMetaPage(p []byte, pgno uint64, m *envMeta) {
	putPageHeader(p, pgno, pageMeta, 0, 0)
	b := p[metaOffset:]
	le.PutUint32(b[0:], m.magic)
	le.PutUint32(b[4:], m.version)
	le.PutUint64(b[8:], m.address)
	le.PutUint64(b[16:], m.mapSize)
	for i := range m.dbs {
		m.dbs[i].encode(b[24+i*treeInfoSize:])
	}
	tail := b[24+coreDBs*treeInfoSize:]
	le.PutUint64(tail[0:], m.lastPg)
	le.PutUint64(tail[8:], m.txnID)
}

// Page header fields.
func pageNo(p []byte) uint64       { return le.Uint64(p[0:]) }
func pageFlags(p []byte) uint16    { return le.Uint16(p[10:]) }
func pageLower(p []byte) int       { return int(le.Uint16(p[12:])) }
func pageUpper(p []byte) int       { return int(le.Uint16(p[14:])) }
func pageRunCount(p []byte) uint64 { return uint64(le.Uint32(p[12:])) }

func putPageHeader(p []byte, pgno uint64, flags uint16, lower, upper int) {
	le.PutUint64(p[0:], pgno)
	le.PutUint16(p[8:], 0)
	le.PutUint16(p[10:], flags)
	le.PutUint16(p[12:], uint16(lower))
	le.PutUint16(p[14:], uint16(upper))
}

// treePage is a branch or leaf page whose header has been checked, so
// its node count and pointer array lie within the page.
type treePage struct {
	b    []byte // the whole page
	pgno uint64
	n    int  // number of nodes
	leaf bool // P_LEAF, else P_BRANCH
}

// parseTreePage checks the header of page pgno: its number, its kind and
// the bounds of its free space, lower <= upper <= page size.
func parseTreePage(b []byte, pgno uint64) (treePage, error) {
	if got := pageNo(b); got != pgno {
		return treePage{}, fmt.Errorf("header says page %d", got)
	}
	f := pageFlags(b)
	switch {
	case f&pageLeaf2 != 0:
		return treePage{}, fmt.Errorf("LEAF2 page (flags %#x): DUPFIXED databases are not supported", f)
	case f&(pageBranch|pageLeaf) == 0 || f&(pageBranch|pageLeaf) == pageBranch|pageLeaf:
		return treePage{}, fmt.Errorf("flags %#x, want a branch (%#x) or leaf (%#x) page", f, pageBranch, pageLeaf)
	}
	lower, upper := pageLower(b), pageUpper(b)
	if lower < pageHeaderSize || lower%2 != 0 || lower > upper || upper > len(b) {
		return treePage{}, fmt.Errorf("free space %d..%d, want %d <= lower <= upper <= %d with lower even",
			lower, upper, pageHeaderSize, len(b))
	}
	return treePage{b: b, pgno: pgno, n: (lower - pageHeaderSize) / 2, leaf: f&pageLeaf != 0}, nil
}

// nodeAt returns the offset of node i and its key, checking that the
// header and key lie after the pointer array and inside the page.
func (p treePage) nodeAt(i int) (off int, key []byte, err error) {
	off = int(le.Uint16(p.b[pageHeaderSize+2*i:]))
	lower := pageHeaderSize + 2*p.n
	if off < lower || off+nodeHeaderSize > len(p.b) {
		return 0, nil, fmt.Errorf("node %d at offset %d, want %d..%d", i, off, lower, len(p.b)-nodeHeaderSize)
	}
	ks := int(le.Uint16(p.b[off+6:]))
	kend := off + nodeHeaderSize + ks
	if kend > len(p.b) {
		return 0, nil, fmt.Errorf("node %d at offset %d: key of %d bytes runs past the page end", i, off, ks)
	}
	return off, p.b[off+nodeHeaderSize : kend : kend], nil
}

// leafNode decodes leaf node i: its key, flags and data size, and the
// data bytes stored in the page: the value itself, or for F_BIGDATA the
// 8-byte page number of the overflow run.
func (p treePage) leafNode(i int) (key []byte, flags uint16, size uint64, inPage []byte, err error) {
	off, key, err := p.nodeAt(i)
	if err != nil {
		return nil, 0, 0, nil, err
	}
	flags = le.Uint16(p.b[off+4:])
	size = uint64(le.Uint16(p.b[off:])) | uint64(le.Uint16(p.b[off+2:]))<<16
	n := size
	if flags&nodeBigData != 0 {
		n = 8
	}
	start := uint64(off + nodeHeaderSize + len(key))
	if start+n > uint64(len(p.b)) {
		return nil, 0, 0, nil, fmt.Errorf("node %d at offset %d: %d data bytes run past the page end", i, off, n)
	}
	end := start + n
	return key, flags, size, p.b[start:end:end], nil
}

// branchChild is the child page of branch node i: lo | hi<<16 | flags<<32.
func (p treePage) branchChild(i int) (uint64, error) {
	off, _, err := p.nodeAt(i)
	if err != nil {
		return 0, err
	}
	b := p.b[off:]
	return uint64(le.Uint16(b[0:])) | uint64(le.Uint16(b[2:]))<<16 | uint64(le.Uint16(b[4:]))<<32, nil
}

// rawNode is node i as stored: header, key and in-page data.
func (p treePage) rawNode(i int) ([]byte, error) {
	if !p.leaf {
		off, key, err := p.nodeAt(i)
		if err != nil {
			return nil, err
		}
		return p.b[off : off+nodeHeaderSize+len(key)], nil
	}
	key, _, _, data, err := p.leafNode(i)
	if err != nil {
		return nil, err
	}
	off, _, _ := p.nodeAt(i)
	return p.b[off : off+nodeHeaderSize+len(key)+len(data)], nil
}
