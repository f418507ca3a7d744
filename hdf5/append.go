package hdf5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
)

// Appender writes an HDF5 file of float datasets that grow along their
// first axis, a batch of rows at a time, as HDF5Output writes one forward
// pass after another. Each call writes the new rows and a few hundred
// bytes of metadata in place; nothing written before is read or written
// again, and nothing but the addresses of the chunks is kept in memory.
//
// The datasets are what libhdf5 makes of a resizable dataset by default,
// so every HDF5 reader reads them: chunked (a chunk holds whole rows, see
// GrowingDataset.ChunkRows) with an unlimited first dimension, the chunks
// indexed by a version-1 B-tree. The last chunk is written in full size,
// its rows past the dataset's end zero.
//
// Within a call the rows and new metadata are written first, the file's
// size and the B-tree next, the datasets' row counts last. A process that
// dies in the microseconds between the last two leaves a file whose index
// names chunks past its datasets' ends, which this package refuses to
// read (libhdf5 reads it, without the last call's rows); one that dies at
// any other moment leaves the file of the calls before.
type Appender struct {
	f    *os.File
	path string
	eof  uint64
	sets []*growing
	buf  []byte // the rows of a call, little-endian
	err  error  // the first failed write: the file's state is unknown after it
}

// GrowingDataset describes a dataset an Appender grows.
type GrowingDataset struct {
	Name string
	// RowShape is the shape of one row: the dataset's dimensions after the
	// first, which counts the rows.
	RowShape []int
	// Float64 stores float64 elements; float32 otherwise.
	Float64 bool
	// ChunkRows is how many rows a chunk would best hold (a batch); it is
	// kept between 16 KiB and 1 MiB a chunk where a row allows (HDF5's
	// advice), and is at least one row.
	ChunkRows int
}

// Chunk sizes the Appender keeps to where rows allow; variables so that
// tests can make trees of many chunks from few rows.
var (
	minChunkBytes = 16 << 10
	maxChunkBytes = 1 << 20
)

// chunkK is the K of the chunk B-tree: a node holds at most 2K children.
// A version-0 superblock does not store it; libhdf5 then takes 32.
const chunkK = 32

// growing is a dataset an Appender grows, and where its mutable metadata
// lies in the file.
type growing struct {
	rowShape  []int
	elem      int // bytes per element
	rowBytes  int
	chunkRows int
	rows      int
	chunks    []uint64   // the chunks' addresses, in row order
	levels    [][]uint64 // the B-tree's nodes: levels[0] the leaves, the last the root alone
	dimsAt    uint64     // the dataspace's first dimension
	btreeAt   uint64     // the layout's B-tree address
}

// CreateAppender creates (or truncates) path as an HDF5 file holding the
// given datasets, empty.
func CreateAppender(path string, sets []GrowingDataset) (*Appender, error) {
	b := NewBuilder()
	a := &Appender{path: path}
	for _, d := range sets {
		g, err := newGrowing(d)
		if err != nil {
			return nil, fmt.Errorf("hdf5: %s: dataset %q: %w", path, d.Name, err)
		}
		if err := b.Root().add(d.Name, g); err != nil {
			return nil, fmt.Errorf("%w in %s", err, path)
		}
		a.sets = append(a.sets, g)
	}
	image := b.Bytes()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return nil, fmt.Errorf("hdf5: %w", err)
	}
	if _, err := f.Write(image); err != nil {
		f.Close()
		return nil, fmt.Errorf("hdf5: writing %s: %w", path, err)
	}
	a.f, a.eof = f, uint64(len(image))
	return a, nil
}

// newGrowing checks a dataset's description and sizes its chunks.
func newGrowing(d GrowingDataset) (*growing, error) {
	g := &growing{rowShape: slices.Clone(d.RowShape), elem: 4}
	if d.Float64 {
		g.elem = 8
	}
	g.rowBytes = g.elem
	for _, s := range d.RowShape {
		if s < 1 || s > math.MaxUint32 {
			return nil, fmt.Errorf("rows of shape %v: every dimension must be 1 to %d", d.RowShape, uint32(math.MaxUint32))
		}
		if g.rowBytes > math.MaxUint32/s {
			return nil, fmt.Errorf("rows of shape %v take over 4 GiB, more than an HDF5 chunk holds", d.RowShape)
		}
		g.rowBytes *= s
	}
	lo := (minChunkBytes + g.rowBytes - 1) / g.rowBytes
	hi := max(1, maxChunkBytes/g.rowBytes)
	g.chunkRows = min(max(d.ChunkRows, lo), hi)
	return g, nil
}

// Rows returns the number of rows dataset i holds.
func (a *Appender) Rows(i int) int { return a.sets[i].rows }

// Path returns the file's path.
func (a *Appender) Path() string { return a.path }

// AppendFloats adds rows to the datasets: rows[i] holds whole rows of
// dataset i (in the order CreateAppender was given them), row-major;
// an empty or missing slice adds none. After an error the file's state is
// unknown and later calls fail.
func AppendFloats[T float32 | float64](a *Appender, rows ...[]T) error {
	if a.err != nil {
		return a.err
	}
	if len(rows) > len(a.sets) {
		return fmt.Errorf("hdf5: %s: rows for %d datasets, the file has %d", a.path, len(rows), len(a.sets))
	}
	// One buffer, kept between calls, holds every dataset's rows.
	buf, ends := a.buf[:0], make([]int, len(rows)+1)
	for i, r := range rows {
		g := a.sets[i]
		var err error
		if buf, err = littleEndian(buf, r, g.elem); err != nil {
			return fmt.Errorf("hdf5: %s: dataset %d: %w", a.path, i, err)
		}
		if ends[i+1] = len(buf); (ends[i+1]-ends[i])%g.rowBytes != 0 {
			return fmt.Errorf("hdf5: %s: dataset %d: %d values are not whole rows of %d", a.path, i, len(r), g.rowBytes/g.elem)
		}
	}
	a.buf = buf
	parts := make([][]byte, len(rows))
	for i := range parts {
		parts[i] = buf[ends[i]:ends[i+1]]
	}
	if err := a.appendBytes(parts); err != nil {
		a.err = fmt.Errorf("hdf5: appending to %s: %w", a.path, err)
		return a.err
	}
	return nil
}

// littleEndian appends data to b as elem-byte little-endian floats.
func littleEndian[T float32 | float64](b []byte, data []T, elem int) ([]byte, error) {
	if len(data) == 0 {
		return b, nil
	}
	switch d := any(data).(type) {
	case []float32:
		if elem != 4 {
			return nil, errors.New("float32 rows for a float64 dataset")
		}
		for _, v := range d {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	case []float64:
		if elem != 8 {
			return nil, errors.New("float64 rows for a float32 dataset")
		}
		for _, v := range d {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b, nil
}

// fileWrite is bytes to write at an address.
type fileWrite struct {
	at uint64
	b  []byte
}

// appendBytes adds each part's rows to its dataset: the rows into their
// chunks, then the B-trees' new nodes, the file's size, the B-trees'
// changed nodes and the datasets' row counts, in that order.
func (a *Appender) appendBytes(parts [][]byte) error {
	oldEOF := a.eof
	var meta, counts []fileWrite
	for i, p := range parts {
		if len(p) == 0 {
			continue
		}
		g := a.sets[i]
		before := len(g.chunks)
		if err := a.writeRows(g, p); err != nil {
			return err
		}
		meta = append(meta, a.growTree(g, before)...)
		counts = append(counts, fileWrite{g.dimsAt, binary.LittleEndian.AppendUint64(nil, uint64(g.rows))})
	}
	if a.eof == oldEOF && len(counts) == 0 {
		return nil
	}
	// The chunks are read whole, the last one's unwritten rows too.
	if err := a.f.Truncate(int64(a.eof)); err != nil {
		return err
	}
	for _, w := range meta {
		if w.at >= oldEOF {
			if err := a.writeAt(w); err != nil {
				return err
			}
		}
	}
	if err := a.writeAt(fileWrite{eofAt, binary.LittleEndian.AppendUint64(nil, a.eof)}); err != nil {
		return err
	}
	for _, w := range meta {
		if w.at < oldEOF {
			if err := a.writeAt(w); err != nil {
				return err
			}
		}
	}
	for _, w := range counts {
		if err := a.writeAt(w); err != nil {
			return err
		}
	}
	return nil
}

func (a *Appender) writeAt(w fileWrite) error {
	_, err := a.f.WriteAt(w.b, int64(w.at))
	return err
}

// alloc reserves n bytes at the end of the file.
func (a *Appender) alloc(n int) uint64 {
	at := a.eof
	a.eof += uint64(n)
	return at
}

// writeRows writes whole rows into g's chunks: into the last chunk while
// it has room, then into new ones.
func (a *Appender) writeRows(g *growing, p []byte) error {
	chunkBytes := g.chunkRows * g.rowBytes
	for len(p) > 0 {
		within := g.rows % g.chunkRows
		if within == 0 {
			g.chunks = append(g.chunks, a.alloc(chunkBytes))
		}
		n := min(len(p), (g.chunkRows-within)*g.rowBytes)
		if err := a.writeAt(fileWrite{g.chunks[len(g.chunks)-1] + uint64(within*g.rowBytes), p[:n]}); err != nil {
			return err
		}
		g.rows += n / g.rowBytes
		p = p[n:]
	}
	return nil
}

// growTree adds the B-tree nodes that g's chunks from chunk before on
// need, and returns the writes of the nodes that change: at every level
// the last node of before (its children, right key and right sibling
// change) and the new ones; and the layout's B-tree address when the root
// is new (the tree grew a level).
func (a *Appender) growTree(g *growing, before int) []fileWrite {
	if len(g.chunks) == before {
		return nil
	}
	oldRoot := g.levels[len(g.levels)-1][0]
	var out []fileWrite
	children := len(g.chunks)
	for level := 0; ; level++ {
		if level == len(g.levels) {
			g.levels = append(g.levels, nil)
		}
		from := max(len(g.levels[level])-1, 0)
		for len(g.levels[level]) < (children+2*chunkK-1)/(2*chunkK) {
			g.levels[level] = append(g.levels[level], a.alloc(g.nodeSize()))
		}
		for j := from; j < len(g.levels[level]); j++ {
			out = append(out, fileWrite{g.levels[level][j], g.node(level, j)})
		}
		if children = len(g.levels[level]); children == 1 {
			break
		}
	}
	if root := g.levels[len(g.levels)-1][0]; root != oldRoot {
		out = append(out, fileWrite{g.btreeAt, binary.LittleEndian.AppendUint64(nil, root)})
	}
	return out
}

// keySize is the size of a chunk B-tree key: the chunk's size and filter
// mask, and its offset in each dimension and in the element's bytes.
func (g *growing) keySize() int { return 8 + 8*(len(g.rowShape)+2) }

// nodeSize is the size of a chunk B-tree node, which libhdf5 reads whole
// whatever its entries: 2K children and 2K+1 keys.
func (g *growing) nodeSize() int { return 8 + 2*offSize + 2*chunkK*offSize + (2*chunkK+1)*g.keySize() }

// node is node j of the B-tree's level (0: the leaves, whose children are
// the chunks) as the chunks and nodes stand. Key i is the first chunk of
// child i; the last key is where the next node's first chunk begins, or,
// in the last node, one past the last chunk in every dimension, as
// libhdf5 writes it.
func (g *growing) node(level, j int) []byte {
	children := g.chunks
	if level > 0 {
		children = g.levels[level-1]
	}
	span := 1 // chunks under each child
	for range level {
		span *= 2 * chunkK
	}
	first := min(j*2*chunkK, len(children))
	last := min(first+2*chunkK, len(children))
	e := &encoder{}
	e.str("TREE")
	e.u8(1) // chunk B-tree
	e.u8(uint8(level))
	e.u16(uint16(last - first))
	left, right := undefined, undefined
	if level < len(g.levels) {
		if nodes := g.levels[level]; j > 0 {
			left = nodes[j-1]
		}
		if nodes := g.levels[level]; j+1 < len(nodes) {
			right = nodes[j+1]
		}
	}
	e.u64(left)
	e.u64(right)
	for c := first; c < last; c++ {
		g.key(e, c*span)
		e.u64(children[c])
	}
	g.key(e, last*span)
	e.zeros(g.nodeSize() - len(e.b))
	return e.b
}

// key writes the B-tree key at chunk c: the chunk's own, or past the last
// chunk the key one past it in every dimension.
func (g *growing) key(e *encoder, c int) {
	if c < len(g.chunks) {
		e.u32(uint32(g.chunkRows * g.rowBytes))
		e.u32(0) // filter mask
		e.u64(uint64(c * g.chunkRows))
		e.zeros(8 * (len(g.rowShape) + 1))
		return
	}
	e.u32(0)
	e.u32(0)
	e.u64(uint64(c * g.chunkRows))
	for _, d := range g.rowShape {
		e.u64(uint64(d))
	}
	e.u64(uint64(g.elem))
}

// Close flushes the file to stable storage and closes it.
func (a *Appender) Close() error {
	if a.f == nil {
		return nil
	}
	err := a.f.Sync()
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	a.f = nil
	if err != nil {
		return fmt.Errorf("hdf5: closing %s: %w", a.path, err)
	}
	return nil
}
