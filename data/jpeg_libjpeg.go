//go:build libjpeg

package data

/*
#cgo LDFLAGS: -ljpeg
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>

// A libjpeg error ends the decode through longjmp back into gc_decode,
// with the library's message.
struct gc_err {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
	char msg[JMSG_LENGTH_MAX];
};

static void gc_error_exit(j_common_ptr c) {
	struct gc_err *e = (struct gc_err *)c->err;
	(*c->err->format_message)(c, e->msg);
	longjmp(e->jb, 1);
}

static void gc_no_message(j_common_ptr c) {}

#define GC_ROWS 16

// gc_decode decodes the JPEG src of n bytes, whose header said w x h, into
// planes: channels 1 (grey) or 3 (B, G, R). row is scratch of GC_ROWS*3*w
// bytes.
// It returns 0, 1 with msg set on a libjpeg error, 2 when the image is
// not w x h, or 3 for a colour space libjpeg does not convert (CMYK).
static int gc_decode(const unsigned char *src, unsigned long n, int channels, int w, int h,
                     unsigned char *out, unsigned char *row, char *msg) {
	struct jpeg_decompress_struct d;
	struct gc_err e;
	d.err = jpeg_std_error(&e.pub);
	e.pub.error_exit = gc_error_exit;
	e.pub.output_message = gc_no_message;
	e.msg[0] = 0;
	if (setjmp(e.jb)) {
		strncpy(msg, e.msg, JMSG_LENGTH_MAX);
		jpeg_destroy_decompress(&d);
		return 1;
	}
	jpeg_create_decompress(&d);
	jpeg_mem_src(&d, src, n);
	jpeg_read_header(&d, TRUE);
	if (d.jpeg_color_space == JCS_CMYK || d.jpeg_color_space == JCS_YCCK) {
		jpeg_destroy_decompress(&d);
		return 3;
	}
	d.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
	jpeg_start_decompress(&d);
	if ((int)d.output_width != w || (int)d.output_height != h || d.output_components != channels) {
		jpeg_destroy_decompress(&d);
		return 2;
	}
	long plane = (long)w * h;
	// GC_ROWS rows a call: libjpeg works in row groups (of up to 16 rows
	// with 2x2 chroma), and a call for one row costs a copy through its
	// own buffer.
	while (d.output_scanline < d.output_height) {
		int y = d.output_scanline;
		JSAMPROW rows[GC_ROWS];
		for (int k = 0; k < GC_ROWS; k++) {
			rows[k] = channels == 1 ? out + (long)(y + k < h ? y + k : h - 1) * w : row + (long)k * 3 * w;
		}
		int got = jpeg_read_scanlines(&d, rows, GC_ROWS);
		if (channels == 3) {
			for (int k = 0; k < got; k++) {
				unsigned char *b = out + (long)(y + k) * w, *g = b + plane, *r = g + plane;
				const unsigned char *in = row + (long)k * 3 * w;
				for (int x = 0; x < w; x++) {
					r[x] = in[3 * x];
					g[x] = in[3 * x + 1];
					b[x] = in[3 * x + 2];
				}
			}
		}
	}
	jpeg_finish_decompress(&d);
	jpeg_destroy_decompress(&d);
	return 0;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// With the libjpeg tag, JPEG images decode through the system's libjpeg
// (libjpeg-turbo on Debian and Ubuntu), the library Caffe's OpenCV decodes
// them with: several times faster than Go's image/jpeg, and the same
// pixels as Caffe (islow IDCT, fancy upsampling). Other formats, and JPEGs
// libjpeg does not convert (CMYK), still decode in Go.
func init() { decodeJPEG = libjpegDecode }

// libjpegDecode decodes a JPEG into planes in mode; ok is false when the
// data is not a JPEG libjpeg converts, for the Go decoder to try.
func libjpegDecode(encoded []byte, mode ColorMode, buf, row []byte) (c, h, w int, pix, rowOut []byte, ok bool, err error) {
	w, h, comps, ok := jpegFrame(encoded)
	if !ok || (comps != 1 && comps != 3) { // CMYK and YCCK have 4: Go's decoder converts them
		return 0, 0, 0, buf, row, false, nil
	}
	c = 3
	if mode == Gray || (mode == Native && comps == 1) {
		c = 1
	}
	pix = grown(buf, c*h*w)
	row = grown(row, C.GC_ROWS*3*w)
	var msg [C.JMSG_LENGTH_MAX]C.char
	switch C.gc_decode((*C.uchar)(unsafe.Pointer(&encoded[0])), C.ulong(len(encoded)), C.int(c), C.int(w), C.int(h),
		(*C.uchar)(unsafe.Pointer(&pix[0])), (*C.uchar)(unsafe.Pointer(&row[0])), &msg[0]) {
	case 0:
		return c, h, w, pix, row, true, nil
	case 1:
		return 0, 0, 0, pix, row, true, fmt.Errorf("libjpeg: %s", C.GoString(&msg[0]))
	case 2:
		return 0, 0, 0, pix, row, true, errors.New("libjpeg: the image's size differs from its header's")
	}
	return 0, 0, 0, pix, row, false, nil // CMYK, YCCK: Go's decoder converts them
}
