package badinput

import "encoding/binary"

// LMDBShareChildren returns a copy of an LMDB data file (data.mdb) whose
// branch pages all point every node to their first child: a DAG, not a
// cycle, so the tree's depth still bounds each descent, while a walk from
// the first record meets that child once per node above it. With fanout f
// and depth d a reader that trusts the tree yields f^(d-1) copies of the
// first leaf's records. The meta pages are left as they are.
func LMDBShareChildren(data []byte) []byte {
	b := append([]byte(nil), data...)
	const (
		metaOffset = 16          // after the page header
		mainDB     = 24 + 48     // the main DB's MDB_db in MDB_meta
		txnAt      = 24 + 96 + 8 // MDB_meta's txnid, after last_pg
	)
	le := binary.LittleEndian
	psize := uint64(le.Uint32(b[metaOffset+24:])) // the free DB's pad
	meta := b[metaOffset:]
	if m1 := b[psize+metaOffset:]; le.Uint64(m1[txnAt:]) > le.Uint64(meta[txnAt:]) {
		meta = m1
	}
	root := le.Uint64(meta[mainDB+40:])
	var share func(pgno uint64)
	share = func(pgno uint64) {
		p := b[pgno*psize : (pgno+1)*psize]
		if le.Uint16(p[10:])&0x01 == 0 { // not a branch page
			return
		}
		n := (int(le.Uint16(p[12:])) - 16) / 2
		first := int(le.Uint16(p[16:]))
		child := p[first : first+6] // lo, hi, flags: the child's page number
		for i := 1; i < n; i++ {
			copy(p[int(le.Uint16(p[16+2*i:])):], child)
		}
		share(uint64(le.Uint16(child[0:])) | uint64(le.Uint16(child[2:]))<<16 | uint64(le.Uint16(child[4:]))<<32)
	}
	share(root)
	return b
}
