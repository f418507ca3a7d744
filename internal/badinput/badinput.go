// Package badinput makes hostile but valid inputs for the hardening tests:
// files whose headers promise far more memory than their size suggests.
package badinput

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
)

// PNGBomb returns a valid 8-bit grayscale PNG of width x height black
// pixels. Its rows compress to almost nothing (20000x20000 is about
// 400 KB), while a decoder that trusts the header allocates width x height
// bytes or more.
func PNGBomb(width, height int) []byte {
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8], ihdr[9] = 8, 0 // bit depth 8, colour type 0 (gray)
	writeChunk(&out, "IHDR", ihdr)

	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	row := make([]byte, 1+width) // filter byte 0, then the pixels
	for range height {
		zw.Write(row)
	}
	zw.Close()
	writeChunk(&out, "IDAT", idat.Bytes())
	writeChunk(&out, "IEND", nil)
	return out.Bytes()
}

func writeChunk(w *bytes.Buffer, kind string, body []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(body)))
	w.Write(n[:])
	crc := crc32.NewIEEE()
	crc.Write([]byte(kind))
	crc.Write(body)
	w.WriteString(kind)
	w.Write(body)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	w.Write(n[:])
}

// EmptyLayers returns a binary NetParameter (a .caffemodel) of n empty
// `layer {}` entries: 3 bytes each on the wire, an 840-byte struct each
// once decoded.
func EmptyLayers(n int) []byte {
	// Field 100 (layer), wire type 2 (length-delimited): the varint
	// 802, then a length of 0.
	return bytes.Repeat([]byte{0xa2, 0x06, 0x00}, n)
}
