package badinput

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"strings"
)

// The HDF5 files below are written byte by byte, as the hdf5 package's
// reader reads them (superblock version 0, version-1 object headers whose
// groups hold link messages, layout message version 3), so that each is
// valid but for the one size that lies, and the hardening tests do not
// depend on the writer they may be testing against.

// H5Dataset is one dataset of a crafted HDF5 file.
type H5Dataset struct {
	Path  string   // "data", or "data/ip/0" inside groups
	Shape []uint64 // the dataspace
	// Compact, when not nil, is the dataset's compact storage.
	Compact []byte
	// Stored, for contiguous storage, is the bytes the file holds:
	// fewer than Shape promises make a truncated dataset; nil with
	// Deflated nil is a dataset never written.
	Stored []byte
	// Deflated, when not nil, makes the dataset one deflated chunk of
	// its whole shape, holding these bytes.
	Deflated []byte
}

// HDF5 returns a file of float32 datasets, in groups as their paths say.
func HDF5(datasets ...H5Dataset) []byte {
	w := &h5writer{}
	w.b = make([]byte, superblockSize)
	root := &h5group{members: map[string]any{}}
	for _, d := range datasets {
		parts := strings.Split(d.Path, "/")
		g := root
		for _, p := range parts[:len(parts)-1] {
			if g.members[p] == nil {
				g.add(p, &h5group{members: map[string]any{}})
			}
			g = g.members[p].(*h5group)
		}
		g.add(parts[len(parts)-1], w.dataset(d))
	}
	w.superblock(w.group(root))
	return w.b
}

// HDF5LinkNameBomb returns a file whose root group has a link message
// saying its name is 2^62 bytes long.
func HDF5LinkNameBomb() []byte {
	w := &h5writer{}
	w.b = make([]byte, superblockSize)
	link := []byte{1, 0x03} // version 1, flags: an 8-byte name length
	link = binary.LittleEndian.AppendUint64(link, 1<<62)
	link = append(link, "data"...)
	link = binary.LittleEndian.AppendUint64(link, 0)
	w.superblock(w.header(h5msg{msgLink, link}))
	return w.b
}

// DeflateBomb returns a zlib stream (what HDF5's deflate filter stores)
// of n zero bytes, n a multiple of 1 MiB: about 1 KB per MiB, a stream of
// identical deflate blocks each repeating the zeros before it.
func DeflateBomb(n int) []byte {
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestCompression)
	mib := make([]byte, 1<<20)
	fw.Write(mib)
	fw.Flush()
	first := len(buf.Bytes())
	fw.Write(mib)
	fw.Flush() // the second block refers only to the zeros before it
	block := buf.Bytes()[first:]

	out := []byte{0x78, 0xda} // zlib header: deflate, 32 KiB window, best compression
	out = append(out, buf.Bytes()[:first]...)
	for range n>>20 - 1 {
		out = append(out, block...)
	}
	out = append(out, 0x03, 0x00) // a final, empty block of fixed codes
	// Adler-32 of n zeros: a stays 1, b adds it n times.
	return binary.BigEndian.AppendUint32(out, uint32(n%65521)<<16|1)
}

const (
	superblockSize = 96
	msgDataspace   = 0x01
	msgDatatype    = 0x03
	msgFillValue   = 0x05
	msgLinkInfo    = 0x02
	msgLink        = 0x06
	msgGroupInfo   = 0x0A
	msgLayout      = 0x08
	msgFilters     = 0x0B
	undefinedAddr  = ^uint64(0)
)

type h5group struct {
	names   []string       // in the order added
	members map[string]any // *h5group, or the address of a dataset's header
}

func (g *h5group) add(name string, m any) {
	g.names = append(g.names, name)
	g.members[name] = m
}

type h5msg struct {
	typ  uint16
	body []byte
}

type h5writer struct{ b []byte }

// put appends p at an 8-byte boundary and returns its address.
func (w *h5writer) put(p []byte) uint64 {
	for len(w.b)%8 != 0 {
		w.b = append(w.b, 0)
	}
	at := uint64(len(w.b))
	w.b = append(w.b, p...)
	return at
}

// header writes a version-1 object header.
func (w *h5writer) header(msgs ...h5msg) uint64 {
	var body []byte
	for _, m := range msgs {
		size := (len(m.body) + 7) &^ 7
		body = binary.LittleEndian.AppendUint16(body, m.typ)
		body = binary.LittleEndian.AppendUint16(body, uint16(size))
		body = append(body, 0, 0, 0, 0)
		body = append(body, m.body...)
		body = append(body, make([]byte, size-len(m.body))...)
	}
	h := []byte{1, 0}
	h = binary.LittleEndian.AppendUint16(h, uint16(len(msgs)))
	h = binary.LittleEndian.AppendUint32(h, 1) // reference count
	h = binary.LittleEndian.AppendUint32(h, uint32(len(body)))
	h = append(h, 0, 0, 0, 0)
	return w.put(append(h, body...))
}

// group writes g's members, then its header of link messages.
func (w *h5writer) group(g *h5group) uint64 {
	// A new-style group: link info (no dense storage, so no heap and no
	// name index) and group info messages, then its links.
	linkInfo := binary.LittleEndian.AppendUint64([]byte{0, 0}, undefinedAddr)
	linkInfo = binary.LittleEndian.AppendUint64(linkInfo, undefinedAddr)
	msgs := []h5msg{{msgLinkInfo, linkInfo}, {msgGroupInfo, []byte{0, 0}}}
	for _, name := range g.names {
		switch m := g.members[name].(type) {
		case uint64:
			msgs = append(msgs, linkMsg(name, m))
		case *h5group:
			msgs = append(msgs, linkMsg(name, w.group(m)))
		}
	}
	return w.header(msgs...)
}

func linkMsg(name string, addr uint64) h5msg {
	b := []byte{1, 0, byte(len(name))} // version 1, a 1-byte name length
	b = append(b, name...)
	return h5msg{msgLink, binary.LittleEndian.AppendUint64(b, addr)}
}

func (w *h5writer) dataset(d H5Dataset) uint64 {
	space := []byte{1, byte(len(d.Shape)), 0, 0, 0, 0, 0, 0}
	for _, s := range d.Shape {
		space = binary.LittleEndian.AppendUint64(space, s)
	}
	// IEEE little-endian float32: sign at bit 31, exponent 23..30 biased
	// by 127, mantissa 0..22.
	dtype := []byte{0x11, 0x20, 0x1f, 0, 4, 0, 0, 0, 0, 0, 32, 0, 23, 8, 0, 23, 127, 0, 0, 0}
	// Fill value message version 2: space allocated late, the fill value
	// written if set, and defined as of size 0: the default, zeros.
	fill := []byte{2, 2, 2, 1, 0, 0, 0, 0}
	msgs := []h5msg{{msgDataspace, space}, {msgDatatype, dtype}, {msgFillValue, fill}}
	layout := []byte{3}
	switch {
	case d.Compact != nil:
		layout = append(layout, 0)
		layout = binary.LittleEndian.AppendUint16(layout, uint16(len(d.Compact)))
		layout = append(layout, d.Compact...)
	case d.Deflated != nil:
		layout = append(layout, 2, byte(len(d.Shape)+1))
		layout = binary.LittleEndian.AppendUint64(layout, w.chunkIndex(d))
		for _, s := range d.Shape {
			layout = binary.LittleEndian.AppendUint32(layout, uint32(s))
		}
		layout = binary.LittleEndian.AppendUint32(layout, 4)
		// Filter pipeline version 1: deflate (1) at level 9.
		filters := []byte{1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0}
		msgs = append(msgs, h5msg{msgFilters, filters})
	default:
		addr := undefinedAddr
		if d.Stored != nil {
			addr = w.put(d.Stored)
		}
		size := uint64(4)
		for _, s := range d.Shape {
			size *= s
		}
		layout = append(layout, 1)
		layout = binary.LittleEndian.AppendUint64(layout, addr)
		layout = binary.LittleEndian.AppendUint64(layout, size)
	}
	msgs = append(msgs, h5msg{msgLayout, layout})
	return w.header(msgs...)
}

// chunkIndex writes d's one chunk and a version-1 B-tree leaf indexing it,
// of the full size libhdf5 reads (K = 32: 64 children).
func (w *h5writer) chunkIndex(d H5Dataset) uint64 {
	const k = 32
	chunk := w.put(d.Deflated)
	key := func(size uint32, offsets []uint64, elem uint64) []byte {
		b := binary.LittleEndian.AppendUint32(nil, size)
		b = binary.LittleEndian.AppendUint32(b, 0) // filter mask
		for _, o := range offsets {
			b = binary.LittleEndian.AppendUint64(b, o)
		}
		return binary.LittleEndian.AppendUint64(b, elem)
	}
	node := []byte("TREE")
	node = append(node, 1, 0, 1, 0) // chunks, level 0, one entry
	node = binary.LittleEndian.AppendUint64(node, undefinedAddr)
	node = binary.LittleEndian.AppendUint64(node, undefinedAddr)
	node = append(node, key(uint32(len(d.Deflated)), make([]uint64, len(d.Shape)), 0)...)
	node = binary.LittleEndian.AppendUint64(node, chunk)
	node = append(node, key(0, d.Shape, 4)...) // the end of the chunk
	keySize := 8 + 8*(len(d.Shape)+1)
	full := 24 + (2*k+1)*keySize + 2*k*8
	return w.put(append(node, make([]byte, full-len(node))...))
}

// superblock writes superblock version 0 naming root's header.
func (w *h5writer) superblock(root uint64) {
	b := []byte{0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'}
	b = append(b, 0, 0, 0, 0, 0, 8, 8, 0)       // versions; 8-byte addresses and lengths
	b = binary.LittleEndian.AppendUint16(b, 4)  // group leaf node K
	b = binary.LittleEndian.AppendUint16(b, 16) // group internal node K
	b = binary.LittleEndian.AppendUint32(b, 0)  // consistency flags
	for _, addr := range []uint64{0, undefinedAddr, uint64(len(w.b)), undefinedAddr, 0, root} {
		// base, free space, end of file, driver info; the root's
		// symbol table entry: link name offset, object header
		b = binary.LittleEndian.AppendUint64(b, addr)
	}
	copy(w.b, b) // the rest, cache type and scratch pad, stays zero
}
