package hdf5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/gocaffe/gocaffe/internal/fileio"
)

// signature starts every HDF5 superblock.
var signature = []byte{0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'}

// undefined is the undefined address (all bits set).
const undefined = ^uint64(0)

// IsHDF5 reports whether the file at path starts with an HDF5 signature
// (at offset 0 or after a user block), as libhdf5's H5Fis_hdf5.
func IsHDF5(path string) bool {
	f, _, err := fileio.Open(path, fileio.NoLimit)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = findSuperblock(f)
	return err == nil
}

// File is an HDF5 file open for reading.
type File struct {
	path    string
	f       *os.File
	r       io.ReaderAt
	size    int64  // the file's length, or -1 when the reader does not say
	offSize int    // size of addresses
	lenSize int    // size of lengths
	base    uint64 // base address: addresses are relative to it
	root    uint64 // the root group's object header
}

// Open opens an HDF5 file for reading.
func Open(path string) (*File, error) {
	f, size, err := fileio.Open(path, fileio.NoLimit)
	if err != nil {
		return nil, err
	}
	file, err := newFile(path, f, size)
	if err != nil {
		f.Close()
		return nil, err
	}
	file.f = f
	return file, nil
}

// NewReader reads an HDF5 file from r; name is used in error messages.
// When r has a Size method (bytes.Reader, io.SectionReader), sizes
// written in the file are checked against it before anything is read.
func NewReader(r io.ReaderAt, name string) (*File, error) {
	size := int64(-1)
	if s, ok := r.(interface{ Size() int64 }); ok {
		size = s.Size()
	}
	return newFile(name, r, size)
}

func newFile(path string, r io.ReaderAt, size int64) (*File, error) {
	file := &File{path: path, r: r, size: size}
	at, err := findSuperblock(r)
	if err != nil {
		return nil, file.errorf("%v", err)
	}
	if err := file.readSuperblock(at); err != nil {
		return nil, err
	}
	return file, nil
}

// Close closes the file.
func (f *File) Close() error {
	if f.f == nil {
		return nil
	}
	return f.f.Close()
}

// Path returns the file's name.
func (f *File) Path() string { return f.path }

// errorf returns an error naming the file.
func (f *File) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: %s", f.path, fmt.Sprintf(format, args...))
}

// findSuperblock finds the signature at 0, 512, 1024, 2048, ...
func findSuperblock(r io.ReaderAt) (uint64, error) {
	buf := make([]byte, len(signature))
	for at := uint64(0); at < 1<<40; at = max(512, at*2) {
		if _, err := r.ReadAt(buf, int64(at)); err != nil {
			break
		}
		if bytes.Equal(buf, signature) {
			return at, nil
		}
	}
	return 0, errors.New("not an HDF5 file (no HDF5 signature)")
}

// readAt reads n bytes at address addr (relative to the base address).
func (f *File) readAt(addr uint64, n int) ([]byte, error) {
	if addr == undefined {
		return nil, f.errorf("read at the undefined address")
	}
	if n < 0 || f.base+addr+uint64(n) < f.base+addr || f.base+addr > 1<<62 {
		return nil, f.errorf("bad read of %d bytes at %d", n, addr)
	}
	if !f.holds(addr, uint64(n)) {
		return nil, f.errorf("%d bytes at %d run past the end of the file%s: truncated or corrupt", n, addr, f.sizeNote())
	}
	buf := make([]byte, n)
	if _, err := f.r.ReadAt(buf, int64(f.base+addr)); err != nil {
		return nil, f.errorf("reading %d bytes at %d: %v (truncated file?)", n, addr, err)
	}
	return buf, nil
}

// holds reports whether the file holds n bytes at addr: by its size when
// known, else by reading the last of them (for a large n only: small
// reads find out by themselves), so that a size read from a corrupt file
// is refused before anything is allocated for it.
func (f *File) holds(addr, n uint64) bool {
	end := f.base + addr + n
	if end < f.base+addr || end > 1<<62 {
		return false
	}
	if f.size >= 0 {
		return end <= uint64(f.size)
	}
	if n <= 1<<16 {
		return true
	}
	var last [1]byte
	_, err := f.r.ReadAt(last[:], int64(end)-1)
	return err == nil
}

// sizeNote is " (N bytes)" when the file's size is known.
func (f *File) sizeNote() string {
	if f.size < 0 {
		return ""
	}
	return fmt.Sprintf(" (%d bytes)", f.size)
}

func (f *File) readSuperblock(at uint64) error {
	head, err := f.readAt(at, 16)
	if err != nil {
		return err
	}
	version := head[8]
	switch version {
	case 0, 1:
		f.offSize, f.lenSize = int(head[13]), int(head[14])
		if err := f.checkSizes(); err != nil {
			return err
		}
		fixed := 24
		if version == 1 {
			fixed = 28
		}
		b, err := f.readAt(at, fixed+4*f.offSize+2*f.offSize+8+16)
		if err != nil {
			return err
		}
		d := decoder{b: b[fixed:], f: f}
		f.base = d.addr()
		d.addr() // free-space info
		d.addr() // end of file
		d.addr() // driver info
		d.addr() // root entry: link name offset
		f.root = d.addr()
	case 2, 3:
		f.offSize, f.lenSize = int(head[9]), int(head[10])
		if err := f.checkSizes(); err != nil {
			return err
		}
		b, err := f.readAt(at, 12+4*f.offSize+4)
		if err != nil {
			return err
		}
		d := decoder{b: b[12:], f: f}
		f.base = d.addr()
		d.addr() // superblock extension
		d.addr() // end of file
		f.root = d.addr()
	default:
		return f.errorf("superblock version %d is not supported", version)
	}
	if f.base == undefined {
		f.base = at
	}
	return nil
}

func (f *File) checkSizes() error {
	for _, s := range []int{f.offSize, f.lenSize} {
		if s != 2 && s != 4 && s != 8 {
			return f.errorf("bad superblock: offset/length size %d", s)
		}
	}
	return nil
}

// decoder reads little-endian fields from a buffer; reads past the end
// yield zeros and set short, which callers turn into an error.
type decoder struct {
	b     []byte
	f     *File
	short bool
}

func (d *decoder) bytes(n int) []byte {
	if n < 0 || n > len(d.b) {
		d.short = true
		d.b = nil
		// Zeros for the fixed-size fields (u8 to uint(8)) that read
		// on; a longer field comes back empty, since its length is a
		// number from the file (a link name of 2^62 bytes).
		if n > 8 {
			return nil
		}
		return make([]byte, max(n, 0))
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) skip(n int)  { d.bytes(n) }
func (d *decoder) u8() uint8   { return d.bytes(1)[0] }
func (d *decoder) u16() uint16 { return binary.LittleEndian.Uint16(d.bytes(2)) }
func (d *decoder) u32() uint32 { return binary.LittleEndian.Uint32(d.bytes(4)) }

// uint reads an n-byte little-endian unsigned integer.
func (d *decoder) uint(n int) uint64 {
	var v uint64
	for i, c := range d.bytes(n) {
		v |= uint64(c) << (8 * i)
	}
	return v
}

// addr reads an address; all bits set is the undefined address.
func (d *decoder) addr() uint64 {
	v := d.uint(d.f.offSize)
	if d.f.offSize < 8 && v == 1<<(8*d.f.offSize)-1 {
		return undefined
	}
	return v
}

func (d *decoder) length() uint64 { return d.uint(d.f.lenSize) }

// Group is a group of an open file.
type Group struct {
	f     *File
	path  string
	names []string // sorted
	addrs map[string]uint64
}

// Root returns the root group "/".
func (f *File) Root() (*Group, error) { return f.openGroup("/", f.root) }

// OpenGroup opens a group by its path from the root ("/a/b" or "a/b").
func (f *File) OpenGroup(path string) (*Group, error) {
	g, err := f.Root()
	if err != nil {
		return nil, err
	}
	for _, name := range strings.Split(strings.Trim(path, "/"), "/") {
		if name == "" {
			continue
		}
		if g, err = g.Group(name); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// OpenDataset opens a dataset by its path from the root.
func (f *File) OpenDataset(path string) (*Dataset, error) {
	dir, name := "/", strings.Trim(path, "/")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		dir, name = name[:i], name[i+1:]
	}
	g, err := f.OpenGroup(dir)
	if err != nil {
		return nil, err
	}
	return g.Dataset(name)
}

// Path returns the group's path in its file.
func (g *Group) Path() string { return g.path }

// Names returns the names of the group's members, sorted (as libhdf5's
// name index).
func (g *Group) Names() []string { return g.names }

// Has reports whether the group has a member of that name.
func (g *Group) Has(name string) bool {
	_, ok := g.addrs[name]
	return ok
}

func (g *Group) child(name string) string {
	if g.path == "/" {
		return "/" + name
	}
	return g.path + "/" + name
}

// member reads the object header of a member.
func (g *Group) member(name string) (*objectHeader, error) {
	addr, ok := g.addrs[name]
	if !ok {
		return nil, g.f.errorf("%s: no such member", g.child(name))
	}
	return g.f.readObjectHeader(addr, g.child(name))
}

// Group opens a member group.
func (g *Group) Group(name string) (*Group, error) {
	addr, ok := g.addrs[name]
	if !ok {
		return nil, g.f.errorf("group %s not found", g.child(name))
	}
	return g.f.openGroup(g.child(name), addr)
}

// IsGroup reports whether member name is a group.
func (g *Group) IsGroup(name string) bool {
	h, err := g.member(name)
	return err == nil && h.isGroup()
}

// Dataset opens a member dataset.
func (g *Group) Dataset(name string) (*Dataset, error) {
	if !g.Has(name) {
		return nil, g.f.errorf("dataset %s not found", g.child(name))
	}
	h, err := g.member(name)
	if err != nil {
		return nil, err
	}
	return g.f.newDataset(g.child(name), h)
}

func (f *File) openGroup(path string, addr uint64) (*Group, error) {
	h, err := f.readObjectHeader(addr, path)
	if err != nil {
		return nil, err
	}
	if !h.isGroup() {
		return nil, f.errorf("%s is not a group", path)
	}
	g := &Group{f: f, path: path, addrs: map[string]uint64{}}
	switch {
	case h.symbolTable != nil:
		err = f.readSymbolTable(g, h.symbolTable)
	case h.denseLinks:
		err = f.readDenseLinks(g, h.linkHeap, h.linkNames)
	default:
		for _, l := range h.links {
			g.addrs[l.name] = l.addr
		}
	}
	if err != nil {
		return nil, err
	}
	for n := range g.addrs {
		g.names = append(g.names, n)
	}
	slices.Sort(g.names)
	return g, nil
}

// readSymbolTable reads an old-style group: a version-1 B-tree of symbol
// table nodes, whose names are in a local heap.
func (f *File) readSymbolTable(g *Group, st *symbolTableMsg) error {
	heap, err := f.readLocalHeap(st.heap, g.path)
	if err != nil {
		return err
	}
	return f.walkBTree1(st.btree, 0, f.lenSize, g.path, func(child uint64, _ []byte) error {
		return f.readSymbolNode(child, heap, g)
	})
}

func (f *File) readLocalHeap(addr uint64, path string) ([]byte, error) {
	b, err := f.readAt(addr, 8+2*f.lenSize+f.offSize)
	if err != nil {
		return nil, err
	}
	if string(b[:4]) != "HEAP" {
		return nil, f.errorf("group %s: bad local heap signature", path)
	}
	d := decoder{b: b[8:], f: f}
	size := d.length()
	d.length() // free list
	data := d.addr()
	if size > 1<<31 {
		return nil, f.errorf("group %s: local heap of %d bytes", path, size)
	}
	return f.readAt(data, int(size))
}

func (f *File) readSymbolNode(addr uint64, heap []byte, g *Group) error {
	head, err := f.readAt(addr, 8)
	if err != nil {
		return err
	}
	if string(head[:4]) != "SNOD" {
		return f.errorf("group %s: bad symbol table node signature", g.path)
	}
	n := int(binary.LittleEndian.Uint16(head[6:]))
	entrySize := 2*f.offSize + 24
	b, err := f.readAt(addr+8, n*entrySize)
	if err != nil {
		return err
	}
	d := decoder{b: b, f: f}
	for range n {
		nameOff := d.uint(f.offSize)
		obj := d.addr()
		d.skip(24) // cache type, reserved, scratch pad
		name, err := heapString(heap, nameOff)
		if err != nil {
			return f.errorf("group %s: %v", g.path, err)
		}
		g.addrs[name] = obj
	}
	return nil
}

// heapString returns the null-terminated string at off in a local heap.
func heapString(heap []byte, off uint64) (string, error) {
	if off >= uint64(len(heap)) {
		return "", fmt.Errorf("name offset %d outside the local heap", off)
	}
	s := heap[off:]
	if i := bytes.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return string(s), nil
}

// walkBTree1 calls leaf for every child of the level-0 nodes of a
// version-1 B-tree of the given type (0 groups, 1 chunks), with the key
// before it. Keys are keySize bytes: a heap offset for groups; chunk size,
// filter mask and rank+1 offsets for chunks.
//
// An address met twice in one walk is an error: libhdf5 never shares a
// node, symbol table node or chunk between entries, and a crafted file
// whose nodes all point to one child (a DAG, not a cycle) would otherwise
// be walked once per path, up to 65535^depth times.
func (f *File) walkBTree1(addr uint64, typ, keySize int, what string, leaf func(child uint64, key []byte) error) error {
	w := btree1Walk{f: f, typ: typ, keySize: keySize, what: what, leaf: leaf, seen: map[uint64]bool{}}
	return w.node(addr, 0, -1)
}

type btree1Walk struct {
	f       *File
	typ     int
	keySize int
	what    string
	leaf    func(uint64, []byte) error
	seen    map[uint64]bool
}

// visit records addr, refusing one already seen.
func (w *btree1Walk) visit(addr uint64) error {
	if w.seen[addr] {
		return w.f.errorf("%s: B-tree reaches address %d twice (a corrupt file)", w.what, addr)
	}
	w.seen[addr] = true
	return nil
}

func (w *btree1Walk) node(addr uint64, depth, wantLevel int) error {
	f := w.f
	if depth > 64 {
		return f.errorf("%s: B-tree too deep (a cycle?)", w.what)
	}
	if err := w.visit(addr); err != nil {
		return err
	}
	head, err := f.readAt(addr, 8+2*f.offSize)
	if err != nil {
		return err
	}
	if string(head[:4]) != "TREE" || int(head[4]) != w.typ {
		return f.errorf("%s: bad B-tree node at %d", w.what, addr)
	}
	level, entries := int(head[5]), int(binary.LittleEndian.Uint16(head[6:]))
	if wantLevel >= 0 && level != wantLevel {
		return f.errorf("%s: B-tree node at %d has level %d, want %d", w.what, addr, level, wantLevel)
	}
	b, err := f.readAt(addr+uint64(len(head)), entries*(w.keySize+f.offSize)+w.keySize)
	if err != nil {
		return err
	}
	d := decoder{b: b, f: f}
	for range entries {
		key := d.bytes(w.keySize)
		child := d.addr()
		if level > 0 {
			err = w.node(child, depth+1, level-1)
		} else if err = w.visit(child); err == nil {
			err = w.leaf(child, key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
