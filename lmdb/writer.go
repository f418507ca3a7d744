package lmdb

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// The LMDB writer bulk-loads a B+tree from records in increasing key
// order, the way Caffe's tools produce them, instead of inserting them
// one by one as liblmdb does:
//
//   - Each tree level has one page being filled in memory. A full page is
//     written at the end of data.mdb and its first key and page number go
//     to the level above, so memory holds a page per level whatever the
//     size of the database.
//   - A value too big for a node (see nodeMax) is written at once as an
//     overflow run, with the same threshold liblmdb uses.
//   - Commit writes copies of the pages being filled, up to a root, then a
//     meta page naming that root with the next transaction id, into meta
//     page txnid%2 as liblmdb alternates them, syncing the pages before the
//     meta. Pages already committed are never written again, so every
//     committed snapshot stays intact for readers; the copies of a
//     commit's partial pages are left unreferenced by the next commit (a
//     few pages per commit, not put on LMDB's free list).
//   - Records Put after the last Commit are dropped by Close, as Caffe's
//     LMDB transaction drops them: Close cuts the file back to the
//     committed pages.
//
// Opening an existing environment with Write appends: the pages on the
// tree's right edge are loaded as the pages being filled, and new keys
// must sort after the last one.

// Writer is an environment opened for writing, by Create or OpenWriter.
type Writer struct {
	mu   sync.Mutex
	w    *fileWriter // nil once closed
	envs []*readEnv  // snapshots opened by NewCursor, closed with the DB
}

// NewTransaction starts a batch of writes, visible to readers at its
// Commit. LMDB has one writer: a transaction may start only when nothing
// is left uncommitted.
func (d *Writer) NewTransaction() (*Txn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.w == nil {
		return nil, errors.New("LMDB database used after Close")
	}
	if d.w.pending > 0 {
		return nil, fmt.Errorf("%s: %d records of an earlier transaction are not committed; LMDB has one writer, commit them first",
			d.w.path, d.w.pending)
	}
	return &Txn{db: d}, nil
}

// NewCursor reads the last committed snapshot.
func (d *Writer) NewCursor() (*Cursor, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.w == nil {
		return nil, errors.New("LMDB database used after Close")
	}
	env, err := openReadEnv(d.w.path, canMmap)
	if err != nil {
		return nil, err
	}
	d.envs = append(d.envs, env)
	c := &Cursor{env: env, ownsEnv: true}
	return c, c.SeekToFirst()
}

// Close drops uncommitted records and closes the files.
func (d *Writer) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.w == nil {
		return nil
	}
	err := d.w.close()
	for _, e := range d.envs {
		err = errors.Join(err, e.close())
	}
	d.w, d.envs = nil, nil
	return err
}

// Create makes a new environment: the directory, data.mdb with two
// meta pages of an empty tree (as mdb_env_init_meta writes them), and an
// empty lock.mdb, which liblmdb sizes and initialises when it first
// opens the environment.
func Create(path string) (*Writer, error) {
	dataPath, lockPath, exists, err := envPaths(path)
	if err != nil {
		return nil, err
	}
	if exists {
		return nil, fmt.Errorf("%s already exists: Create makes a new environment; OpenWriter (mode Write) adds to one", dataPath)
	}
	dir := filepath.Dir(dataPath)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(dataPath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o664)
	if err != nil {
		return nil, err
	}
	w, err := newFileWriter(f, dataPath)
	if err == nil {
		err = createLockFile(lockPath)
	}
	if err != nil {
		f.Close()
		os.Remove(dataPath)
		return nil, err
	}
	syncDir(dir)
	return &Writer{w: w}, nil
}

// OpenWriter appends to an existing environment or creates one.
func OpenWriter(path string) (*Writer, error) {
	dataPath, lockPath, exists, err := envPaths(path)
	if err != nil {
		return nil, err
	}
	if !exists {
		return Create(path)
	}
	if err := checkLockFree(lockPath); err != nil {
		return nil, err
	}
	w, err := appendFileWriter(dataPath)
	if err != nil {
		return nil, err
	}
	return &Writer{w: w}, nil
}

func createLockFile(lockPath string) error {
	f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o664)
	if err != nil {
		return err
	}
	return f.Close()
}

// syncDir makes new directory entries durable where the system allows
// it; it is best effort, as some systems cannot sync a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// fileWriter appends records to one data file.
type fileWriter struct {
	path      string
	f         *os.File
	pw        *pageWriter
	tree      *treeBuilder
	meta      envMeta // the last committed meta
	committed uint64  // pages in the committed snapshot: lastPg+1
	lastKey   []byte
	hasLast   bool
	pending   int   // records Put since the last commit
	err       error // a failed write leaves the file in doubt: refuse more
}

// newFileWriter writes both meta pages of an empty environment into the
// empty file f.
func newFileWriter(f *os.File, path string) (*fileWriter, error) {
	m := envMeta{magic: mdbMagic, version: mdbDataVersion, mapSize: minMapSize, lastPg: numMetas - 1}
	m.dbs[freeDBI] = treeInfo{pad: defaultPageSize, flags: dbIntegerKey, root: invalidPgno}
	m.dbs[mainDBI] = treeInfo{root: invalidPgno}
	w := &fileWriter{path: path, f: f, meta: m, committed: numMetas}
	w.pw = newPageWriter(f, defaultPageSize, 0)
	w.tree = newTreeBuilder(w.pw)
	for pgno := uint64(0); pgno < numMetas; pgno++ {
		if err := w.pw.writeMeta(pgno, &m); err != nil {
			return nil, err
		}
	}
	if err := w.pw.bw.Flush(); err != nil {
		return nil, err
	}
	return w, f.Sync()
}

// minMapSize is liblmdb's DEFAULT_MAPSIZE; the map size recorded in
// the meta doubles from it to stay above the data file's size.
const minMapSize = 1 << 20

// appendFileWriter opens an existing data file to add records after its
// last key.
func appendFileWriter(path string) (*fileWriter, error) {
	env, err := openReadEnv(path, false)
	if err != nil {
		return nil, err
	}
	defer env.close()
	m := env.meta
	if fl := m.dbs[mainDBI].flags; fl != 0 {
		return nil, fmt.Errorf("%s: main database has flags %#x (integer, reverse or duplicate keys): appending is not supported; use New", path, fl)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	w := &fileWriter{path: path, f: f, meta: m, committed: m.lastPg + 1}
	w.pw = newPageWriter(f, int(env.psize), m.lastPg+1)
	w.tree = newTreeBuilder(w.pw)
	if err := w.loadRightEdge(env); err != nil {
		f.Close()
		return nil, err
	}
	// Pages past lastPg belong to no snapshot: write over them.
	off := int64(w.committed * env.psize)
	if err := f.Truncate(off); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// loadRightEdge makes the pages on the right edge of the existing tree
// the pages being filled, and takes their counts out of the tree's
// statistics, as they will be counted again when written.
func (w *fileWriter) loadRightEdge(env *readEnv) error {
	info := env.meta.dbs[mainDBI]
	t := w.tree
	t.stats = info
	if info.root == invalidPgno {
		return nil
	}
	path, err := rightEdge(env, info)
	if err != nil {
		return err
	}
	if info.leafPages < 1 || info.branchPages < uint64(len(path)-1) {
		return fmt.Errorf("%s: meta (txn %d) counts %d leaf and %d branch pages for a tree of depth %d",
			w.path, env.meta.txnID, info.leafPages, info.branchPages, len(path))
	}
	t.stats.leafPages--
	t.stats.branchPages -= uint64(len(path) - 1)
	var first []byte // the lowest key under path[i], if not leftmost
	t.levels = make([]*pageBuilder, len(path))
	for i, p := range path {
		b, err := loadBuilder(env, p, first)
		if err != nil {
			return err
		}
		t.levels[len(path)-1-i] = b
		if !p.leaf && p.n > 1 {
			_, first, _ = p.nodeAt(p.n - 1)
		}
	}
	last := path[len(path)-1]
	key, _, _, _, _ := last.leafNode(last.n - 1)
	w.lastKey, w.hasLast = append([]byte(nil), key...), true
	return nil
}

// rightEdge is the path from the root to the last leaf.
func rightEdge(env *readEnv, info treeInfo) ([]treePage, error) {
	var path []treePage
	pgno := info.root
	for level := 1; ; level++ {
		p, err := env.treePage(pgno)
		if err != nil {
			return nil, err
		}
		if p.n == 0 || p.leaf != (level == int(info.depth)) {
			return nil, env.pageErr(pgno, fmt.Errorf("%d nodes, leaf=%v at level %d of a tree of depth %d", p.n, p.leaf, level, info.depth))
		}
		path = append(path, p)
		if p.leaf {
			return path, nil
		}
		if pgno, err = p.branchChild(p.n - 1); err != nil {
			return nil, env.pageErr(p.pgno, err)
		}
	}
}

// loadBuilder copies the nodes of page p into a page being filled. A
// branch page's last node is left out: it points to the old copy of the
// right-edge child, which is being filled anew and is added back when
// written.
func loadBuilder(env *readEnv, p treePage, first []byte) (*pageBuilder, error) {
	b := newPageBuilder(len(p.b), !p.leaf)
	b.first = append(b.first, first...)
	n := p.n
	if !p.leaf {
		n--
	}
	for i := 0; i < n; i++ {
		node, err := p.rawNode(i)
		if err != nil {
			return nil, env.pageErr(p.pgno, err)
		}
		if p.leaf && le.Uint16(node[4:])&(nodeSubData|nodeDupData) != 0 {
			return nil, env.pageErr(p.pgno, errors.New("named or duplicate-key records: appending is not supported; use New"))
		}
		if !b.fits(len(node)) {
			return nil, env.pageErr(p.pgno, errors.New("nodes do not fit a page"))
		}
		b.addRaw(node)
	}
	return b, nil
}

// put adds a record after the last one.
func (w *fileWriter) put(key, val []byte) error {
	if w.err != nil {
		return w.err
	}
	if err := w.checkRecord(key, val); err != nil {
		return err
	}
	if err := w.tree.put(key, val); err != nil {
		w.err = fmt.Errorf("%s: %w", w.path, err)
		return w.err
	}
	w.lastKey, w.hasLast = append(w.lastKey[:0], key...), true
	w.pending++
	return nil
}

func (w *fileWriter) checkRecord(key, val []byte) error {
	if len(key) < 1 || len(key) > maxKeySize {
		return fmt.Errorf("%s: key %q is %d bytes; LMDB keys are 1 to %d bytes", w.path, key, len(key), maxKeySize)
	}
	if nodeHeaderSize+len(key)+8 > w.tree.nodeMax {
		return fmt.Errorf("%s: key %q is %d bytes, too long for %d-byte pages", w.path, key, len(key), w.pw.psize)
	}
	if uint64(len(val)) > maxDataSize {
		return fmt.Errorf("%s: value of key %q is %d bytes; LMDB values are at most %d bytes", w.path, key, len(val), uint64(maxDataSize))
	}
	if !w.hasLast {
		return nil
	}
	switch bytes.Compare(key, w.lastKey) {
	case 0:
		return fmt.Errorf("%s: duplicate key %q: the LMDB writer needs strictly increasing keys", w.path, key)
	case -1:
		return fmt.Errorf("%s: key %q sorts before the previous key %q: the LMDB writer needs strictly increasing keys, as Caffe's tools write them",
			w.path, key, w.lastKey)
	}
	return nil
}

// commit writes the tree as it stands and a meta page naming it.
func (w *fileWriter) commit() error {
	if w.err != nil {
		return w.err
	}
	if w.pending == 0 {
		return nil // as liblmdb, an empty transaction writes nothing
	}
	if err := w.writeSnapshot(); err != nil {
		w.err = fmt.Errorf("%s: commit: %w", w.path, err)
		return w.err
	}
	w.pending = 0
	return nil
}

func (w *fileWriter) writeSnapshot() error {
	t := w.tree.clone()
	root, depth, err := t.finish()
	if err != nil {
		return err
	}
	m := w.meta
	m.txnID++
	m.dbs[mainDBI] = t.stats
	m.dbs[mainDBI].root, m.dbs[mainDBI].depth = root, uint16(depth)
	m.lastPg = w.pw.next - 1
	m.mapSize = max(m.mapSize, minMapSize)
	for m.mapSize < w.pw.next*uint64(w.pw.psize) {
		m.mapSize *= 2
	}
	// Pages first, then the meta that names them: a crash in between
	// leaves the previous snapshot.
	if err := w.pw.bw.Flush(); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return err
	}
	if err := w.pw.writeMetaAt(m.txnID%numMetas, &m); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return err
	}
	w.meta, w.committed = m, m.lastPg+1
	return nil
}

// close drops uncommitted records by cutting the file back to the
// committed pages.
func (w *fileWriter) close() error {
	err := w.f.Truncate(int64(w.committed) * int64(w.pw.psize))
	if err == nil {
		err = w.f.Sync()
	}
	return errors.Join(err, w.f.Close())
}

// pageWriter appends pages to the data file in page-number order.
type pageWriter struct {
	f     *os.File
	bw    *bufio.Writer
	psize int
	next  uint64 // the next page number, written at offset next*psize
	zeros []byte
}

func newPageWriter(f *os.File, psize int, next uint64) *pageWriter {
	return &pageWriter{f: f, bw: bufio.NewWriterSize(f, 1<<20), psize: psize, next: next, zeros: make([]byte, psize)}
}

// writePage writes the page being filled as the next page.
func (pw *pageWriter) writePage(b *pageBuilder) (uint64, error) {
	pgno := pw.next
	if pgno >= 1<<48 {
		return 0, errors.New("page numbers exceed the 48 bits a branch node holds")
	}
	if _, err := pw.bw.Write(b.finish(pgno)); err != nil {
		return 0, err
	}
	pw.next++
	return pgno, nil
}

// writeOverflow writes val as an overflow run (the value follows the
// first page's header) and returns its first page and length.
func (pw *pageWriter) writeOverflow(val []byte) (pgno, n uint64, err error) {
	pgno, n = pw.next, overflowPages(uint64(len(val)), uint64(pw.psize))
	var hdr [pageHeaderSize]byte
	putPageHeader(hdr[:], pgno, pageOverflow, 0, 0)
	le.PutUint32(hdr[12:], uint32(n))
	pad := int(n*uint64(pw.psize)) - pageHeaderSize - len(val)
	for _, b := range [][]byte{hdr[:], val, pw.zeros[:pad]} {
		if _, err := pw.bw.Write(b); err != nil {
			return 0, 0, err
		}
	}
	pw.next += n
	return pgno, n, nil
}

// writeMeta appends meta page pgno, for a new file.
func (pw *pageWriter) writeMeta(pgno uint64, m *envMeta) error {
	p := make([]byte, pw.psize)
	encodeMetaPage(p, pgno, m)
	_, err := pw.bw.Write(p)
	pw.next++
	return err
}

// writeMetaAt overwrites meta page pgno.
func (pw *pageWriter) writeMetaAt(pgno uint64, m *envMeta) error {
	p := make([]byte, pw.psize)
	encodeMetaPage(p, pgno, m)
	_, err := pw.f.WriteAt(p, int64(pgno)*int64(pw.psize))
	return err
}

// treeBuilder holds the page being filled at each level, leaves first,
// and the statistics of the pages written so far.
type treeBuilder struct {
	pw      *pageWriter
	nodeMax int
	levels  []*pageBuilder
	stats   treeInfo // counts and entries; root and depth come at finish
}

func newTreeBuilder(pw *pageWriter) *treeBuilder {
	return &treeBuilder{
		pw:      pw,
		nodeMax: nodeMax(pw.psize),
		levels:  []*pageBuilder{newPageBuilder(pw.psize, false)},
	}
}

// clone copies the pages being filled, so that a commit can finish a
// tree from them and leave them to be filled further.
func (t *treeBuilder) clone() *treeBuilder {
	c := *t
	c.levels = make([]*pageBuilder, len(t.levels))
	for i, b := range t.levels {
		c.levels[i] = b.clone()
	}
	return &c
}

// put adds a leaf node, its value on an overflow run when the node would
// pass the node size limit.
func (t *treeBuilder) put(key, val []byte) error {
	data, size, flags := val, uint32(len(val)), uint16(0)
	if nodeHeaderSize+len(key)+len(val) > t.nodeMax {
		pgno, n, err := t.pw.writeOverflow(val)
		if err != nil {
			return err
		}
		t.stats.overflowPages += n
		var ref [8]byte
		le.PutUint64(ref[:], pgno)
		data, flags = ref[:], nodeBigData
	}
	leaf := t.levels[0]
	if !leaf.fits(nodeHeaderSize + len(key) + len(data)) {
		if err := t.flush(0); err != nil {
			return err
		}
	}
	if leaf.n == 0 {
		leaf.first = append(leaf.first[:0], key...)
	}
	leaf.addNode(key, size, flags, data)
	t.stats.entries++
	return nil
}

// flush writes level h's page and adds it to the level above.
func (t *treeBuilder) flush(h int) error {
	b := t.levels[h]
	pgno, err := t.pw.writePage(b)
	if err != nil {
		return err
	}
	if b.branch {
		t.stats.branchPages++
	} else {
		t.stats.leafPages++
	}
	if err := t.addChild(h+1, b.first, pgno); err != nil {
		return err
	}
	b.reset()
	return nil
}

// addChild adds a branch node for child page pgno, whose lowest key is
// key, at level h. A page's first branch node gets an empty key, as
// liblmdb's do: searches never compare it.
func (t *treeBuilder) addChild(h int, key []byte, pgno uint64) error {
	if h == len(t.levels) {
		t.levels = append(t.levels, newPageBuilder(t.pw.psize, true))
	}
	b := t.levels[h]
	if !b.fits(nodeHeaderSize + len(key)) {
		if err := t.flush(h); err != nil {
			return err
		}
	}
	if b.n == 0 {
		b.first = append(b.first[:0], key...)
		key = nil
	}
	b.addNode(key, uint32(pgno), uint16(pgno>>32), nil)
	return nil
}

// finish writes the pages being filled from the leaves up and returns
// the root and the depth. A top branch page with a single child is not
// written: the child is the root. A branch level may be empty after
// loadRightEdge; the flush of the level below fills it before its turn.
func (t *treeBuilder) finish() (root uint64, depth int, err error) {
	if len(t.levels) == 1 && t.levels[0].n == 0 {
		return invalidPgno, 0, nil
	}
	for h := 0; ; h++ {
		b := t.levels[h]
		if h < len(t.levels)-1 {
			if err := t.flush(h); err != nil {
				return 0, 0, err
			}
			continue
		}
		if b.branch && b.n == 1 {
			return b.child(0), h, nil
		}
		pgno, err := t.pw.writePage(b)
		if err != nil {
			return 0, 0, err
		}
		if b.branch {
			t.stats.branchPages++
		} else {
			t.stats.leafPages++
		}
		return pgno, h + 1, nil
	}
}

// pageBuilder fills a branch or leaf page as mdb_node_add does: node
// pointers grow up from the header, nodes grow down from the page end.
type pageBuilder struct {
	buf          []byte
	branch       bool
	lower, upper int
	n            int
	first        []byte // the lowest key under this page
}

func newPageBuilder(psize int, branch bool) *pageBuilder {
	return &pageBuilder{buf: make([]byte, psize), branch: branch, lower: pageHeaderSize, upper: psize}
}

func (b *pageBuilder) clone() *pageBuilder {
	c := *b
	c.buf = bytes.Clone(b.buf)
	c.first = bytes.Clone(b.first)
	return &c
}

// reset empties the page; the zeroed gap keeps the file free of stale
// bytes.
func (b *pageBuilder) reset() {
	clear(b.buf)
	b.lower, b.upper, b.n = pageHeaderSize, len(b.buf), 0
	b.first = b.first[:0]
}

// fits says whether a node of size bytes and its pointer fit.
func (b *pageBuilder) fits(size int) bool {
	return even(size) <= b.upper-b.lower-2
}

// addNode appends a node: lo and hi hold size (or a child's page number
// with flags holding its top 16 bits), then the key and data.
func (b *pageBuilder) addNode(key []byte, size uint32, flags uint16, data []byte) {
	off := b.place(nodeHeaderSize + len(key) + len(data))
	n := b.buf[off:]
	le.PutUint16(n[0:], uint16(size))
	le.PutUint16(n[2:], uint16(size>>16))
	le.PutUint16(n[4:], flags)
	le.PutUint16(n[6:], uint16(len(key)))
	copy(n[nodeHeaderSize:], key)
	copy(n[nodeHeaderSize+len(key):], data)
}

// addRaw appends a node copied from another page.
func (b *pageBuilder) addRaw(node []byte) {
	copy(b.buf[b.place(len(node)):], node)
}

// place reserves room for a node and its pointer; fits must hold.
func (b *pageBuilder) place(size int) int {
	b.upper -= even(size)
	le.PutUint16(b.buf[b.lower:], uint16(b.upper))
	b.lower += 2
	b.n++
	return b.upper
}

// child is the page number held by branch node i.
func (b *pageBuilder) child(i int) uint64 {
	n := b.buf[le.Uint16(b.buf[pageHeaderSize+2*i:]):]
	return uint64(le.Uint16(n[0:])) | uint64(le.Uint16(n[2:]))<<16 | uint64(le.Uint16(n[4:]))<<32
}

// finish fills in the header for page pgno and returns the page.
func (b *pageBuilder) finish(pgno uint64) []byte {
	flags := uint16(pageLeaf)
	if b.branch {
		flags = pageBranch
	}
	putPageHeader(b.buf, pgno, flags, b.lower, b.upper)
	return b.buf
}
