// Package lmdb reads and writes LMDB environments in pure Go, in the
// on-disk format of liblmdb 0.9 (see format.go), so that datasets made by
// Caffe's convert_imageset and convert_mnist_data are read as they are and
// the datasets written here are read by Caffe and liblmdb's tools. It is
// the storage engine of package data's LMDB backend, and useful alone:
//
//	w, err := lmdb.Create("train_lmdb")
//	txn, err := w.NewTransaction()
//	err = txn.Put([]byte("00000000"), record) // keys in increasing order
//	err = txn.Commit()
//	err = w.Close()
//
//	r, err := lmdb.OpenReader("train_lmdb")
//	cur, err := r.NewCursor()
//	for ; cur.Valid(); cur.Next() {
//		use(cur.Key(), cur.Value())
//	}
//
// An environment is a directory holding data.mdb and lock.mdb; OpenReader
// also accepts the path of a data.mdb file itself (MDB_NOSUBDIR layout).
// Only the unnamed main database is used, without duplicate keys.
//
// Reading maps data.mdb and walks the B+tree of the newest meta page, so
// keys and values are slices of the mapping. The reader does not take a
// slot in lock.mdb's reader table: a liblmdb writer working on the same
// environment at the same time may reuse pages it is reading. Caffe never
// does that; its datasets are written once and then read.
//
// Writing appends pages to data.mdb as records arrive (see writer.go) and
// needs keys in strictly increasing order, as Caffe's tools produce them.
package lmdb

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/gocaffe/gocaffe/internal/fileio"
)

const (
	dataName = "data.mdb"
	lockName = "lock.mdb"
	// lockSuffix names the lock file beside a data file given by
	// its own path, as liblmdb does with MDB_NOSUBDIR.
	lockSuffix = "-lock"
)

// envPaths finds the data and lock files of the environment at path: a
// directory, or a data file itself. exists says whether the data file is
// there.
func envPaths(path string) (dataPath, lockPath string, exists bool, err error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return filepath.Join(path, dataName), filepath.Join(path, lockName), false, nil
	case err != nil:
		return "", "", false, err
	case st.Mode().IsRegular():
		return path, path + lockSuffix, true, nil
	case !st.IsDir():
		return "", "", false, fmt.Errorf("%s is neither a directory nor a data file", path)
	}
	dataPath = filepath.Join(path, dataName)
	_, err = os.Stat(dataPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", "", false, err
	}
	return dataPath, filepath.Join(path, lockName), err == nil, nil
}

// OpenReader opens an existing environment for reading; a missing one is
// an error.
func OpenReader(path string) (*Reader, error) {
	dataPath, _, exists, err := envPaths(path)
	if err != nil {
		return nil, err
	}
	if !exists {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("no LMDB environment: %w", err)
		}
		return nil, fmt.Errorf("no LMDB environment: %s does not exist: %w", dataPath, fs.ErrNotExist)
	}
	env, err := openReadEnv(dataPath, canMmap)
	if err != nil {
		return nil, err
	}
	return &Reader{env: env}, nil
}

// readEnv is one snapshot of a data file opened for reading: the newest
// valid meta page and access to the pages it reaches.
type readEnv struct {
	file  string
	f     *os.File
	data  []byte // the mapped file, or nil to read pages with ReadAt
	size  uint64 // file length when opened
	psize uint64
	meta  envMeta

	mu     sync.Mutex
	closed bool
}

// openReadEnv opens a data file, mapped when mmap is set.
func openReadEnv(file string, mmap bool) (*readEnv, error) {
	f, _, err := fileio.Open(file, fileio.NoLimit)
	if err != nil {
		return nil, err
	}
	e := &readEnv{file: file, f: f}
	if err := e.init(mmap); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *readEnv) init(mmap bool) error {
	st, err := e.f.Stat()
	if err != nil {
		return err
	}
	e.size = uint64(st.Size())
	if e.size < metaOffset+metaSize {
		return fmt.Errorf("%s: not an LMDB data file: %d bytes, too short for a meta page", e.file, e.size)
	}
	if mmap {
		if e.data, err = mmapFile(e.f, st.Size()); err != nil {
			return fmt.Errorf("%s: %w", e.file, err)
		}
	}
	return e.pickMeta()
}

// pickMeta reads meta page 0, which gives the page size, then meta page
// 1, and keeps the valid one with the larger transaction id, as
// mdb_env_read_header does. A damaged meta page 1 is tolerated when page
// 0 is valid: it is the one a crash during a commit may have torn.
func (e *readEnv) pickMeta() error {
	p0, err := e.read(0, metaOffset+metaSize)
	if err != nil {
		return err
	}
	m := decodeMeta(p0)
	if err := checkMeta(p0, &m); err != nil {
		return fmt.Errorf("%s: page 0: %w", e.file, err)
	}
	ps := m.pageSize()
	if ps < 512 || ps > 65536 || ps&(ps-1) != 0 {
		return fmt.Errorf("%s: page 0: page size %d, want a power of two from 512 to 65536", e.file, ps)
	}
	e.psize = uint64(ps)
	if p1, err := e.read(e.psize, metaOffset+metaSize); err == nil {
		m1 := decodeMeta(p1)
		if checkMeta(p1, &m1) == nil && m1.txnID > m.txnID {
			m = m1
		}
	}
	e.meta = m
	return e.checkMainTree()
}

// checkMainTree rejects main databases this reader cannot walk.
func (e *readEnv) checkMainTree() error {
	t := e.meta.dbs[mainDBI]
	if t.flags&dbDupSort != 0 {
		return fmt.Errorf("%s: main database has flags %#x: DUPSORT databases are not supported", e.file, t.flags)
	}
	if t.root == invalidPgno {
		return nil
	}
	if t.root < numMetas || t.root > e.meta.lastPg {
		return fmt.Errorf("%s: meta (txn %d): root page %d outside pages %d..%d", e.file, e.meta.txnID, t.root, numMetas, e.meta.lastPg)
	}
	if t.depth < 1 || t.depth > maxDepth {
		return fmt.Errorf("%s: meta (txn %d): tree depth %d, want 1..%d", e.file, e.meta.txnID, t.depth, maxDepth)
	}
	return nil
}

// read returns n bytes at off, within the file.
func (e *readEnv) read(off, n uint64) ([]byte, error) {
	if off > e.size || n > e.size-off {
		return nil, fmt.Errorf("%s: %d bytes at offset %d run past the end of the file (%d bytes): truncated?", e.file, n, off, e.size)
	}
	if e.data != nil {
		return e.data[off : off+n : off+n], nil
	}
	b := make([]byte, n)
	if _, err := e.f.ReadAt(b, int64(off)); err != nil {
		return nil, fmt.Errorf("%s: reading %d bytes at offset %d: %w", e.file, n, off, err)
	}
	return b, nil
}

// pages returns the n pages from pgno, which the snapshot must reach.
func (e *readEnv) pages(pgno, n uint64) ([]byte, error) {
	last := e.meta.lastPg
	if pgno < numMetas || pgno > last || n == 0 || n-1 > last-pgno {
		return nil, fmt.Errorf("%s: page %d (run of %d): outside the snapshot's pages %d..%d", e.file, pgno, n, numMetas, last)
	}
	if pgno >= e.size/e.psize || n > e.size/e.psize-pgno {
		return nil, fmt.Errorf("%s: page %d (run of %d): past the end of the file (%d bytes, %d pages of %d bytes): truncated?",
			e.file, pgno, n, e.size, e.size/e.psize, e.psize)
	}
	return e.read(pgno*e.psize, n*e.psize)
}

// treePage fetches and checks branch or leaf page pgno.
func (e *readEnv) treePage(pgno uint64) (treePage, error) {
	b, err := e.pages(pgno, 1)
	if err != nil {
		return treePage{}, err
	}
	p, err := parseTreePage(b, pgno)
	if err != nil {
		return treePage{}, e.pageErr(pgno, err)
	}
	return p, nil
}

// overflow returns the size-byte value held by the overflow run at pgno.
func (e *readEnv) overflow(pgno, size uint64) ([]byte, error) {
	first, err := e.pages(pgno, 1)
	if err != nil {
		return nil, err
	}
	if f := pageFlags(first); f&pageOverflow == 0 || pageNo(first) != pgno {
		return nil, e.pageErr(pgno, fmt.Errorf("header says page %d with flags %#x, want an overflow page (%#x)", pageNo(first), f, pageOverflow))
	}
	n := pageRunCount(first)
	if need := overflowPages(size, e.psize); n < need {
		return nil, e.pageErr(pgno, fmt.Errorf("overflow run of %d pages cannot hold a %d-byte value (needs %d)", n, size, need))
	}
	run, err := e.pages(pgno, n)
	if err != nil {
		return nil, err
	}
	end := pageHeaderSize + size
	return run[pageHeaderSize:end:end], nil
}

func (e *readEnv) pageErr(pgno uint64, err error) error {
	return fmt.Errorf("%s: page %d: %w", e.file, pgno, err)
}

func (e *readEnv) isClosed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// close unmaps the file: keys and values read from it are gone.
func (e *readEnv) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var err error
	if e.data != nil {
		err = munmapFile(e.data)
		e.data = nil
	}
	return errors.Join(err, e.f.Close())
}

// Reader is an environment opened for reading: the snapshot committed
// when it was opened.
type Reader struct{ env *readEnv }

// NewCursor returns a cursor on the first record.
func (d *Reader) NewCursor() (*Cursor, error) {
	c := &Cursor{env: d.env}
	return c, c.SeekToFirst()
}

// File returns the path of the environment's data file.
func (d *Reader) File() string { return d.env.file }

// Close unmaps the file; keys and values from its cursors become invalid.
func (d *Reader) Close() error { return d.env.close() }

// Cursor walks an environment's records in key order, with a stack of
// (page, index) from the root of its tree to the current leaf. Key and
// Value are only valid until the next call to Next, SeekToFirst or Close
// (they are slices of the mapped file or of a buffer): copy them to keep
// them, and never modify them.
type Cursor struct {
	env      *readEnv
	ownsEnv  bool // a write-mode DB's cursor has its own snapshot to close
	stack    []cursorFrame
	key, val []byte
	valid    bool
	// seen marks the pages this pass from the first record has reached:
	// in a B+tree each page has one parent, so a page met twice means
	// branches that share children. A crafted file whose branch pages
	// all point to one child (a DAG, which the depth bound does not
	// catch) would otherwise yield one record fanout^depth times.
	seen pageSet
}

// pageSet is a bitmap of page numbers.
type pageSet []uint64

// reset empties the set, sized for pages 0..n-1.
func (s *pageSet) reset(n uint64) {
	words := int((n + 63) / 64)
	if cap(*s) < words {
		*s = make(pageSet, words)
		return
	}
	*s = (*s)[:words]
	clear(*s)
}

// add marks page p, reporting false when it was marked already. The
// callers have checked that p lies in the file.
func (s pageSet) add(p uint64) bool {
	w, bit := p/64, uint64(1)<<(p%64)
	if s[w]&bit != 0 {
		return false
	}
	s[w] |= bit
	return true
}

type cursorFrame struct {
	p treePage
	i int
}

// SeekToFirst moves to the first record; in an empty environment Valid is
// then false.
func (c *Cursor) SeekToFirst() error {
	c.stack, c.valid = c.stack[:0], false
	if c.env.isClosed() {
		return fmt.Errorf("%s: cursor used after Close", c.env.file)
	}
	root := c.env.meta.dbs[mainDBI].root
	if root == invalidPgno {
		return nil
	}
	c.seen.reset(c.env.size / c.env.psize)
	if err := c.push(root); err != nil {
		return err
	}
	return c.settle()
}

// Next moves to the following record; past the last it stays invalid.
func (c *Cursor) Next() error {
	if !c.valid {
		return nil
	}
	c.valid = false
	if c.env.isClosed() {
		return fmt.Errorf("%s: cursor used after Close", c.env.file)
	}
	c.stack[len(c.stack)-1].i++
	return c.settle()
}

// settle moves from the top frame's index to the next record: up past
// exhausted pages, then down the leftmost path to a leaf.
func (c *Cursor) settle() error {
	for len(c.stack) > 0 {
		top := &c.stack[len(c.stack)-1]
		switch {
		case top.i >= top.p.n:
			c.stack = c.stack[:len(c.stack)-1]
			if len(c.stack) > 0 {
				c.stack[len(c.stack)-1].i++
			}
		case top.p.leaf:
			return c.load(top)
		default:
			child, err := top.p.branchChild(top.i)
			if err != nil {
				return c.env.pageErr(top.p.pgno, err)
			}
			if err := c.push(child); err != nil {
				return err
			}
		}
	}
	return nil
}

// push descends to page pgno, which must be a branch above the meta's
// depth and a leaf at it: that bounds the walk on a corrupt file.
func (c *Cursor) push(pgno uint64) error {
	depth := int(c.env.meta.dbs[mainDBI].depth)
	level := len(c.stack)
	if level >= depth {
		return c.env.pageErr(pgno, fmt.Errorf("reached below the tree's depth %d (a cycle?)", depth))
	}
	p, err := c.env.treePage(pgno)
	if err != nil {
		return err
	}
	if !c.seen.add(pgno) {
		return c.env.pageErr(pgno, errors.New("reached a second time in one pass over the tree: branch pages share it (a corrupt file)"))
	}
	if p.leaf != (level == depth-1) {
		return c.env.pageErr(pgno, fmt.Errorf("leaf=%v at level %d of a tree of depth %d", p.leaf, level+1, depth))
	}
	// liblmdb never leaves a page of a tree empty (an empty tree has no
	// root). Refusing them keeps each step of the cursor within depth
	// pages, even on a crafted file whose pages share children.
	if p.n == 0 {
		return c.env.pageErr(pgno, errors.New("empty page in the tree"))
	}
	c.stack = append(c.stack, cursorFrame{p: p})
	return nil
}

// load makes the frame's leaf node the current record.
func (c *Cursor) load(f *cursorFrame) error {
	key, flags, size, data, err := f.p.leafNode(f.i)
	if err != nil {
		return c.env.pageErr(f.p.pgno, err)
	}
	if flags&(nodeSubData|nodeDupData) != 0 {
		return c.env.pageErr(f.p.pgno, fmt.Errorf("key %q has node flags %#x: named or duplicate-key databases are not supported", key, flags))
	}
	if flags&nodeBigData != 0 {
		pgno := le.Uint64(data)
		if data, err = c.env.overflow(pgno, size); err != nil {
			return fmt.Errorf("value of key %q: %w", key, err)
		}
		// liblmdb gives each large value a run of its own: one
		// shared by many nodes would be read once per node.
		for p := range overflowPages(size, c.env.psize) {
			if !c.seen.add(pgno + p) {
				return fmt.Errorf("value of key %q: %w", key, c.env.pageErr(pgno+p, errors.New("overflow page reached a second time in one pass over the tree (a corrupt file)")))
			}
		}
	}
	c.key, c.val, c.valid = key, data, true
	return nil
}

// Valid reports whether the cursor is on a record.
func (c *Cursor) Valid() bool { return c.valid }

// Key returns the current record's key.
func (c *Cursor) Key() []byte { return c.key }

// Value returns the current record's value.
func (c *Cursor) Value() []byte { return c.val }

// Close releases the cursor (and the snapshot a Writer's cursor reads).
func (c *Cursor) Close() error {
	c.stack, c.valid, c.key, c.val = nil, false, nil, nil
	if c.ownsEnv {
		return c.env.close()
	}
	return nil
}

// Txn is a write transaction. LMDB has a single writer per
// environment: the Puts of all transactions of one DB form one batch,
// which any of them commits, and a new transaction may start only when
// nothing is left uncommitted.
type Txn struct{ db *Writer }

// Put adds a record; the key must be greater than every key before it.
func (t *Txn) Put(key, value []byte) error {
	t.db.mu.Lock()
	defer t.db.mu.Unlock()
	if t.db.w == nil {
		return errors.New("LMDB transaction used after Close")
	}
	return t.db.w.put(key, value)
}

// Commit makes every record Put so far durable and visible to readers.
func (t *Txn) Commit() error {
	t.db.mu.Lock()
	defer t.db.mu.Unlock()
	if t.db.w == nil {
		return errors.New("LMDB transaction used after Close")
	}
	return t.db.w.commit()
}
