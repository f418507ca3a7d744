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

// gc_split_scalar writes n RGB pixels of in to the planes b, g and r.
static void gc_split_scalar(const unsigned char *in, unsigned char *b, unsigned char *g, unsigned char *r, int n) {
	for (int x = 0; x < n; x++) {
		r[x] = in[3 * x];
		g[x] = in[3 * x + 1];
		b[x] = in[3 * x + 2];
	}
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

// gc_split_ssse3 is gc_split_scalar 16 pixels (48 bytes, three loads) at a
// time: each plane's 16 bytes are gathered from the three loads by byte
// shuffles (a mask byte of -1 gives 0) and or-ed together. The scalar
// loop cost about a fifth of a 256x256 decode on the H100 hosts.
__attribute__((target("ssse3")))
static void gc_split_ssse3(const unsigned char *in, unsigned char *b, unsigned char *g, unsigned char *r, int n) {
	const __m128i ra = _mm_setr_epi8(0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
	const __m128i rb = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14, -1, -1, -1, -1, -1);
	const __m128i rc = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1, 4, 7, 10, 13);
	const __m128i ga = _mm_setr_epi8(1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
	const __m128i gb = _mm_setr_epi8(-1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15, -1, -1, -1, -1, -1);
	const __m128i gc = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 5, 8, 11, 14);
	const __m128i ba = _mm_setr_epi8(2, 5, 8, 11, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
	const __m128i bb = _mm_setr_epi8(-1, -1, -1, -1, -1, 1, 4, 7, 10, 13, -1, -1, -1, -1, -1, -1);
	const __m128i bc = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 3, 6, 9, 12, 15);
	int x = 0;
	for (; x + 16 <= n; x += 16) {
		const unsigned char *p = in + 3 * x;
		__m128i a = _mm_loadu_si128((const __m128i *)p);
		__m128i m = _mm_loadu_si128((const __m128i *)(p + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(p + 32));
		__m128i vr = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, ra), _mm_shuffle_epi8(m, rb)), _mm_shuffle_epi8(c, rc));
		__m128i vg = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, ga), _mm_shuffle_epi8(m, gb)), _mm_shuffle_epi8(c, gc));
		__m128i vb = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, ba), _mm_shuffle_epi8(m, bb)), _mm_shuffle_epi8(c, bc));
		_mm_storeu_si128((__m128i *)(r + x), vr);
		_mm_storeu_si128((__m128i *)(g + x), vg);
		_mm_storeu_si128((__m128i *)(b + x), vb);
	}
	gc_split_scalar(in + 3 * x, b + x, g + x, r + x, n - x);
}

static int gc_has_ssse3(void) {
	static int has = -1;
	if (has < 0) {
		has = __builtin_cpu_supports("ssse3");
	}
	return has;
}

static void gc_split(const unsigned char *in, unsigned char *b, unsigned char *g, unsigned char *r, int n) {
	if (gc_has_ssse3()) {
		gc_split_ssse3(in, b, g, r, n);
	} else {
		gc_split_scalar(in, b, g, r, n);
	}
}
#else
static void gc_split(const unsigned char *in, unsigned char *b, unsigned char *g, unsigned char *r, int n) {
	gc_split_scalar(in, b, g, r, n);
}
#endif

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
				unsigned char *b = out + (long)(y + k) * w;
				gc_split(row + (long)k * 3 * w, b, b + plane, b + 2 * plane, w);
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
