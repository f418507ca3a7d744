package hdf5

import (
	"encoding/binary"
)

// Object header message types this package reads.
const (
	msgDataspace    = 0x01
	msgLinkInfo     = 0x02
	msgDatatype     = 0x03
	msgLink         = 0x06
	msgLayout       = 0x08
	msgGroupInfo    = 0x0A
	msgFilters      = 0x0B
	msgContinuation = 0x10
	msgSymbolTable  = 0x11
)

// msgShared is the message flag of a shared (committed) message.
const msgShared = 0x02

type symbolTableMsg struct{ btree, heap uint64 }

type linkMsg struct {
	name string
	addr uint64 // hard links only
}

// objectHeader holds the messages of one object that this package uses.
type objectHeader struct {
	path        string
	dataspace   []byte
	datatype    []byte
	layout      []byte
	filters     []byte
	shared      []int // types of shared messages
	symbolTable *symbolTableMsg
	links       []linkMsg
	newGroup    bool // link info or group info message
	denseLinks  bool
	// Dense link storage: the fractal heap and the name index.
	linkHeap, linkNames uint64
}

func (h *objectHeader) isGroup() bool {
	return h.symbolTable != nil || h.newGroup || len(h.links) > 0
}

// readObjectHeader reads the object header at addr (version 1 or 2) and
// its continuation blocks.
func (f *File) readObjectHeader(addr uint64, path string) (*objectHeader, error) {
	h := &objectHeader{path: path}
	head, err := f.readAt(addr, 16)
	if err != nil {
		return nil, err
	}
	if string(head[:4]) == "OHDR" {
		return h, f.readObjectHeaderV2(addr, h)
	}
	if head[0] != 1 {
		return nil, f.errorf("%s: object header version %d is not supported", path, head[0])
	}
	nmsgs := int(binary.LittleEndian.Uint16(head[2:]))
	size := binary.LittleEndian.Uint32(head[8:])
	blocks := headerBlocks{f: f, path: path}
	blocks.add(addr+16, uint64(size))
	seen := 0
	for i := 0; i < len(blocks.list) && seen < nmsgs; i++ {
		if err := blocks.check(i); err != nil {
			return nil, err
		}
		b, err := f.readAt(blocks.list[i].addr, int(blocks.list[i].size))
		if err != nil {
			return nil, err
		}
		d := decoder{b: b, f: f}
		for len(d.b) >= 8 && seen < nmsgs {
			typ := int(d.u16())
			n := int(d.u16())
			flags := d.u8()
			d.skip(3)
			data := d.bytes(n)
			if d.short {
				return nil, f.errorf("%s: object header message runs past its block", path)
			}
			seen++
			if typ == msgContinuation {
				cd := decoder{b: data, f: f}
				blocks.add(cd.addr(), cd.length())
				continue
			}
			if err := h.add(f, typ, flags, data); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}

func (f *File) readObjectHeaderV2(addr uint64, h *objectHeader) error {
	pre, err := f.readAt(addr, 6+16+4+8)
	if err != nil {
		return err
	}
	if pre[4] != 2 {
		return f.errorf("%s: object header version %d is not supported", h.path, pre[4])
	}
	flags := pre[5]
	at := 6
	if flags&0x20 != 0 {
		at += 16 // times
	}
	if flags&0x10 != 0 {
		at += 4 // attribute phase change
	}
	sizeBytes := 1 << (flags & 3)
	size := decoder{b: pre[at : at+sizeBytes], f: f}.uintAll()
	creationOrder := flags&0x04 != 0
	blocks := headerBlocks{f: f, path: h.path}
	blocks.add(addr+uint64(at+sizeBytes), size)
	for i := 0; i < len(blocks.list); i++ {
		if err := blocks.check(i); err != nil {
			return err
		}
		b, err := f.readAt(blocks.list[i].addr, int(blocks.list[i].size))
		if err != nil {
			return err
		}
		if i > 0 { // a continuation chunk: signature, messages, checksum
			if len(b) < 8 || string(b[:4]) != "OCHK" {
				return f.errorf("%s: bad object header continuation", h.path)
			}
			b = b[4 : len(b)-4]
		}
		d := decoder{b: b, f: f}
		hdr := 4
		if creationOrder {
			hdr = 6
		}
		for len(d.b) >= hdr {
			typ := int(d.u8())
			n := int(d.u16())
			mflags := d.u8()
			if creationOrder {
				d.skip(2)
			}
			data := d.bytes(n)
			if d.short {
				return f.errorf("%s: object header message runs past its chunk", h.path)
			}
			if typ == msgContinuation {
				cd := decoder{b: data, f: f}
				blocks.add(cd.addr(), cd.length())
				continue
			}
			if err := h.add(f, typ, mflags, data); err != nil {
				return err
			}
		}
	}
	return nil
}

// headerBlocks are the blocks of one object header: the first and its
// continuations.
type headerBlocks struct {
	f     *File
	path  string
	list  []struct{ addr, size uint64 }
	total uint64 // bytes of the blocks checked so far
}

func (b *headerBlocks) add(addr, size uint64) {
	b.list = append(b.list, struct{ addr, size uint64 }{addr, size})
}

// check bounds the work a crafted header can ask for: the blocks of one
// object header never overlap in a file libhdf5 wrote, so none comes twice
// and together they fit in the file; continuations pointing back at a
// block, or at a large one again and again, would otherwise read the file
// over and over.
func (b *headerBlocks) check(i int) error {
	if i > 1000 {
		return b.f.errorf("%s: too many object header continuations", b.path)
	}
	for _, o := range b.list[:i] {
		if o.addr == b.list[i].addr {
			return b.f.errorf("%s: object header continuation at %d comes twice (a corrupt file)", b.path, o.addr)
		}
	}
	b.total += b.list[i].size
	if b.total < b.list[i].size || (b.f.size >= 0 && b.total > uint64(b.f.size)) {
		return b.f.errorf("%s: object header blocks of more bytes than the file holds (a corrupt file)", b.path)
	}
	return nil
}

// uintAll reads the whole buffer as a little-endian unsigned integer.
func (d decoder) uintAll() uint64 { return d.uint(len(d.b)) }

// add records one message.
func (h *objectHeader) add(f *File, typ int, flags uint8, data []byte) error {
	if flags&msgShared != 0 {
		h.shared = append(h.shared, typ)
		return nil
	}
	switch typ {
	case msgDataspace:
		h.dataspace = data
	case msgDatatype:
		h.datatype = data
	case msgLayout:
		h.layout = data
	case msgFilters:
		h.filters = data
	case msgSymbolTable:
		d := decoder{b: data, f: f}
		h.symbolTable = &symbolTableMsg{btree: d.addr(), heap: d.addr()}
	case msgGroupInfo:
		h.newGroup = true
	case msgLinkInfo:
		h.newGroup = true
		d := decoder{b: data, f: f}
		d.skip(1)
		if d.u8()&1 != 0 {
			d.skip(8)
		}
		h.linkHeap, h.linkNames = d.addr(), d.addr()
		h.denseLinks = h.linkHeap != undefined
	case msgLink:
		l, ok, err := parseLink(f, data)
		if err != nil {
			return f.errorf("%s: %v", h.path, err)
		}
		if ok {
			h.links = append(h.links, l)
		}
	}
	return nil
}

// parseLink decodes a link message; ok is false for soft and external
// links, which this package does not follow.
func parseLink(f *File, data []byte) (linkMsg, bool, error) {
	d := decoder{b: data, f: f}
	if v := d.u8(); v != 1 {
		return linkMsg{}, false, errorString("link message version %d", v)
	}
	flags := d.u8()
	linkType := uint8(0)
	if flags&0x08 != 0 {
		linkType = d.u8()
	}
	if flags&0x04 != 0 {
		d.skip(8)
	}
	if flags&0x10 != 0 {
		d.skip(1)
	}
	n := d.uint(1 << (flags & 3))
	if n > uint64(len(d.b)) {
		return linkMsg{}, false, errorString("link name of %d bytes in a link message of %d", n, len(data))
	}
	name := string(d.bytes(int(n)))
	if linkType != 0 {
		return linkMsg{}, false, nil
	}
	addr := d.addr()
	if d.short {
		return linkMsg{}, false, errorString("short link message")
	}
	return linkMsg{name: name, addr: addr}, true, nil
}
