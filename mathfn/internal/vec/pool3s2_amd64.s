//go:build amd64 && !purego

#include "textflag.h"

// 3x3 pooling windows of stride 2 without padding (CIFAR-10 quick's,
// CaffeNet's and GoogLeNet's pools), sixteen windows of an output row at
// a time: a row of the window's rows is 33 columns of the input, loaded as
// two vectors and the next column (masked loads, so columns past the
// plane read nothing), and split into its even columns E (each window's
// first), odd ones O (its second) and E shifted by one (its third). Each
// of the window's rows that lies inside the plane is then folded in in
// Caffe's row-major order. The masks come four to a chunk of sixteen
// outputs (see pool3s2Masks): the two vectors' columns inside the plane,
// the next column's, and the outputs of the row.

DATA pool3s2even<>+0(SB)/4, $0
DATA pool3s2even<>+4(SB)/4, $2
DATA pool3s2even<>+8(SB)/4, $4
DATA pool3s2even<>+12(SB)/4, $6
DATA pool3s2even<>+16(SB)/4, $8
DATA pool3s2even<>+20(SB)/4, $10
DATA pool3s2even<>+24(SB)/4, $12
DATA pool3s2even<>+28(SB)/4, $14
DATA pool3s2even<>+32(SB)/4, $16
DATA pool3s2even<>+36(SB)/4, $18
DATA pool3s2even<>+40(SB)/4, $20
DATA pool3s2even<>+44(SB)/4, $22
DATA pool3s2even<>+48(SB)/4, $24
DATA pool3s2even<>+52(SB)/4, $26
DATA pool3s2even<>+56(SB)/4, $28
DATA pool3s2even<>+60(SB)/4, $30
GLOBL pool3s2even<>(SB), RODATA|NOPTR, $64

// The inverse of the split: the first and second sixteen columns of a row
// from its even columns (table 0..15) and odd ones (16..31).
DATA pool3s2lo<>+0(SB)/4, $0
DATA pool3s2lo<>+4(SB)/4, $16
DATA pool3s2lo<>+8(SB)/4, $1
DATA pool3s2lo<>+12(SB)/4, $17
DATA pool3s2lo<>+16(SB)/4, $2
DATA pool3s2lo<>+20(SB)/4, $18
DATA pool3s2lo<>+24(SB)/4, $3
DATA pool3s2lo<>+28(SB)/4, $19
DATA pool3s2lo<>+32(SB)/4, $4
DATA pool3s2lo<>+36(SB)/4, $20
DATA pool3s2lo<>+40(SB)/4, $5
DATA pool3s2lo<>+44(SB)/4, $21
DATA pool3s2lo<>+48(SB)/4, $6
DATA pool3s2lo<>+52(SB)/4, $22
DATA pool3s2lo<>+56(SB)/4, $7
DATA pool3s2lo<>+60(SB)/4, $23
GLOBL pool3s2lo<>(SB), RODATA|NOPTR, $64

// One row of the window: Z0, Z1, Z2 the row's 33 columns (those outside
// the plane as the fill of Z0-Z2 before), Z3 = E, Z4 = O, Z5 = E shifted.
#define SPLITROW \
	VMOVAPS   Z30, Z3; \
	VPERMI2PS Z1, Z0, Z3; \
	VMOVAPS   Z29, Z4; \
	VPERMI2PS Z1, Z0, Z4; \
	VALIGND   $1, Z3, Z2, Z5

// MAX: Z7 the best values, Z8 their positions, Z9 the positions of the
// windows' first elements in this row. A later element wins only when it
// is larger (GT_OQ: never a NaN), as in Caffe's loop.
#define MAXROW \
	VMOVAPS   Z31, Z0; \
	VMOVUPS   (AX), K1, Z0; \
	VMOVAPS   Z31, Z1; \
	VMOVUPS   64(AX), K2, Z1; \
	VMOVAPS   Z31, Z2; \
	VMOVUPS   128(AX), K3, Z2; \
	SPLITROW; \
	VCMPPS    $0x1e, Z7, Z3, K5; \
	VMOVAPS   Z3, K5, Z7; \
	VMOVDQA32 Z9, K5, Z8; \
	VPADDD    Z27, Z9, Z6; \
	VCMPPS    $0x1e, Z7, Z4, K5; \
	VMOVAPS   Z4, K5, Z7; \
	VMOVDQA32 Z6, K5, Z8; \
	VPADDD    Z27, Z6, Z6; \
	VCMPPS    $0x1e, Z7, Z5, K5; \
	VMOVAPS   Z5, K5, Z7; \
	VMOVDQA32 Z6, K5, Z8

// AVE: Z7 the running sums; columns outside the plane read as +0, which
// leaves a sum that starts at +0 unchanged.
#define AVEROW \
	VMOVUPS.Z (AX), K1, Z0; \
	VMOVUPS.Z 64(AX), K2, Z1; \
	VMOVUPS.Z 128(AX), K3, Z2; \
	SPLITROW; \
	VADDPS    Z3, Z7, Z7; \
	VADDPS    Z4, Z7, Z7; \
	VADDPS    Z5, Z7, Z7

// The constants every kernel uses: Z30 the even positions 0..30 (the
// split's table), Z29 the odd ones, Z27 ones, Z28 the width, R9 a row's
// bytes.
#define CONSTANTS \
	VMOVDQU32    pool3s2even<>(SB), Z30; \
	MOVL         $1, AX; \
	VPBROADCASTD AX, Z27; \
	VPADDD       Z27, Z30, Z29; \
	MOVQ         w+32(FP), AX; \
	VPBROADCASTD AX, Z28; \
	MOVQ         AX, R9; \
	SHLQ         $2, R9

// func maxPool3s2AVX512(x, y, idx *float32, n, w, h, oh, ow int, masks *uint16, chunks int)
TEXT ·maxPool3s2AVX512(SB), NOSPLIT, $16-80
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ idx+16(FP), DX
	MOVQ n+24(FP), AX
	MOVQ AX, left-16(SP)
	MOVQ SI, plane-8(SP)
	CONSTANTS
	MOVQ ow+56(FP), R11
	SHLQ $2, R11                      // an output row's bytes
	MOVL $0xff7fffff, AX
	VPBROADCASTD AX, Z31              // -FLT_MAX: Caffe's start, never exceeded by the fill

maxplane:
	MOVQ h+40(FP), R10                // input rows from the window's first on
	MOVQ oh+48(FP), R12
	XORQ R13, R13                     // position of the window's first row

maxrow:
	MOVQ masks+64(FP), BX
	MOVQ chunks+72(FP), CX
	XORQ R14, R14                     // the chunk's first input column, in bytes

maxchunk:
	KMOVW 0(BX), K1
	KMOVW 2(BX), K2
	KMOVW 4(BX), K3
	KMOVW 6(BX), K4
	LEAQ (SI)(R14*1), AX
	MOVQ R14, R8
	SHRQ $2, R8
	ADDQ R13, R8
	VPBROADCASTD R8, Z9
	VPADDD Z30, Z9, Z9
	VMOVAPS Z31, Z7
	VPTERNLOGD $0xff, Z8, Z8, Z8      // no position: -1
	MAXROW
	CMPQ R10, $2
	JLT maxstore
	ADDQ R9, AX
	VPADDD Z28, Z9, Z9
	MAXROW
	CMPQ R10, $3
	JLT maxstore
	ADDQ R9, AX
	VPADDD Z28, Z9, Z9
	MAXROW

maxstore:
	VCVTDQ2PS Z8, Z8
	MOVQ R14, R8
	SHRQ $1, R8                       // the chunk's first output, in bytes
	VMOVUPS Z7, K4, (DI)(R8*1)
	VMOVUPS Z8, K4, (DX)(R8*1)
	ADDQ $8, BX
	ADDQ $128, R14
	DECQ CX
	JNZ maxchunk
	LEAQ (SI)(R9*2), SI
	ADDQ R11, DI
	ADDQ R11, DX
	MOVQ w+32(FP), AX
	LEAQ (R13)(AX*2), R13
	SUBQ $2, R10
	DECQ R12
	JNZ maxrow
	MOVQ h+40(FP), AX
	IMULQ R9, AX
	MOVQ plane-8(SP), SI
	ADDQ AX, SI
	MOVQ SI, plane-8(SP)
	DECQ left-16(SP)
	JNZ maxplane
	VZEROUPPER
	RET

// func avePool3s2AVX512(x, y, unused *float32, n, w, h, oh, ow int, masks *uint16, chunks int)
//
// Each window's sum, in Caffe's order from +0, divided by its size
// clipped to the plane (Caffe's divisor without padding).
TEXT ·avePool3s2AVX512(SB), NOSPLIT, $16-80
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+24(FP), AX
	MOVQ AX, left-16(SP)
	MOVQ SI, plane-8(SP)
	CONSTANTS
	MOVQ ow+56(FP), R11
	SHLQ $2, R11
	MOVL $3, AX
	VPBROADCASTD AX, Z26

aveplane:
	MOVQ h+40(FP), R10
	MOVQ oh+48(FP), R12

averow:
	MOVQ masks+64(FP), BX
	MOVQ chunks+72(FP), CX
	XORQ R14, R14
	MOVQ R10, AX                      // the window's rows: min(3, rows left)
	CMPQ AX, $3
	JLE averows
	MOVQ $3, AX

averows:
	VPBROADCASTD AX, Z10

avechunk:
	KMOVW 0(BX), K1
	KMOVW 2(BX), K2
	KMOVW 4(BX), K3
	KMOVW 6(BX), K4
	LEAQ (SI)(R14*1), AX
	MOVQ R14, R8                      // the window's columns: min(3, w - its first)
	SHRQ $2, R8
	NEGQ R8
	ADDQ w+32(FP), R8
	VPBROADCASTD R8, Z11
	VPSUBD Z30, Z11, Z11
	VPMINSD Z26, Z11, Z11
	VPMULLD Z10, Z11, Z11
	VCVTDQ2PS Z11, Z11
	VPXORD Z7, Z7, Z7
	AVEROW
	CMPQ R10, $2
	JLT avestore
	ADDQ R9, AX
	AVEROW
	CMPQ R10, $3
	JLT avestore
	ADDQ R9, AX
	AVEROW

avestore:
	VDIVPS Z11, Z7, Z7
	MOVQ R14, R8
	SHRQ $1, R8
	VMOVUPS Z7, K4, (DI)(R8*1)
	ADDQ $8, BX
	ADDQ $128, R14
	DECQ CX
	JNZ avechunk
	LEAQ (SI)(R9*2), SI
	ADDQ R11, DI
	SUBQ $2, R10
	DECQ R12
	JNZ averow
	MOVQ h+40(FP), AX
	IMULQ R9, AX
	MOVQ plane-8(SP), SI
	ADDQ AX, SI
	MOVQ SI, plane-8(SP)
	DECQ left-16(SP)
	JNZ aveplane
	VZEROUPPER
	RET

// Interleaves Z0 (a row's even columns) and Z1 (its odd ones) into the
// row's 32 columns and stores those inside the plane (K1, K2) at AX.
#define STOREROW \
	VMOVAPS   Z25, Z2; \
	VPERMI2PS Z1, Z0, Z2; \
	VMOVAPS   Z24, Z3; \
	VPERMI2PS Z1, Z0, Z3; \
	VMOVUPS   Z2, K1, (AX); \
	VMOVUPS   Z3, K2, 64(AX)

// Per pair of rows 2t, 2t+1 of dx and chunk: the window rows t-1 (A) and t
// (B) of the chunk, their previous chunk's last window (the carries), and
// each element written once, its windows' shares added in Caffe's order
// from +0 (no window: +0, which leaves such a sum unchanged). Row 2t lies
// in windows t-1 and t (their third and first rows), row 2t+1 in window t;
// an even column 2j in windows j-1 and j, an odd one in window j.

// func avePool3s2BackAVX512(dy, dx, unused *float32, n, w, h, oh, ow int, masks *uint16, chunks int)
//
// Writes dx as Caffe's accumulation of each window's dy divided by its
// size: rows 2t and 2t+1 for t = 0..oh, every row of the plane (windows
// start inside it, so 2*oh+1 >= h-1). chunks here cover the input's
// columns, 32 a chunk.
TEXT ·avePool3s2BackAVX512(SB), NOSPLIT, $16-80
	MOVQ dy+0(FP), DI
	MOVQ dx+8(FP), SI
	MOVQ n+24(FP), AX
	MOVQ AX, left-16(SP)
	MOVQ SI, plane-8(SP)
	CONSTANTS
	MOVQ ow+56(FP), R11
	SHLQ $2, R11
	MOVL $3, AX
	VPBROADCASTD AX, Z26
	VMOVDQU32 pool3s2lo<>(SB), Z25
	MOVL $8, AX
	VPBROADCASTD AX, Z24
	VPADDD Z24, Z25, Z24              // the second sixteen columns' table
	VPXORD Z31, Z31, Z31

avebplane:
	MOVQ h+40(FP), R10                // rows from 2t on
	MOVQ oh+48(FP), R12
	INCQ R12                          // t = 0..oh
	KXORW K6, K6, K6                  // window row t-1: none yet

avebrow:
	MOVL $0xffff, AX                  // window row t: none at t = oh
	CMPQ R12, $1
	JNE avebhasb
	XORL AX, AX

avebhasb:
	KMOVW AX, K7
	MOVQ R10, AX                      // window t's rows: min(3, h - 2t)
	CMPQ AX, $3
	JLE avebrowsb
	MOVQ $3, AX

avebrowsb:
	VPBROADCASTD AX, Z10
	LEAQ 2(R10), AX                   // window t-1's
	CMPQ AX, $3
	JLE avebrowsa
	MOVQ $3, AX

avebrowsa:
	VPBROADCASTD AX, Z9
	MOVQ masks+64(FP), BX
	MOVQ chunks+72(FP), CX
	XORQ R14, R14
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	MOVQ DI, R13
	SUBQ R11, R13                     // dy's row t-1

avebchunk:
	KMOVW 0(BX), K1
	KMOVW 2(BX), K2
	KMOVW 6(BX), K4
	KANDW K4, K6, K5
	KANDW K4, K7, K3
	MOVQ R14, R8                      // the windows' columns: min(3, w - their first)
	SHRQ $2, R8
	NEGQ R8
	ADDQ w+32(FP), R8
	VPBROADCASTD R8, Z11
	VPSUBD Z30, Z11, Z11
	VPMINSD Z26, Z11, Z11
	VPMULLD Z9, Z11, Z12
	VCVTDQ2PS Z12, Z12
	VPMULLD Z10, Z11, Z11
	VCVTDQ2PS Z11, Z11
	MOVQ R14, R8
	SHRQ $1, R8
	VMOVUPS.Z (R13)(R8*1), K5, Z16
	VDIVPS.Z Z12, Z16, K5, Z16        // window row t-1's shares
	VMOVUPS.Z (DI)(R8*1), K3, Z17
	VDIVPS.Z Z11, Z17, K3, Z17        // window row t's
	VALIGND $15, Z14, Z16, Z18        // window j-1's, in lane j
	VALIGND $15, Z15, Z17, Z19
	VMOVAPS Z16, Z14
	VMOVAPS Z17, Z15
	CMPQ R10, $1
	JLT avebnext
	LEAQ (SI)(R14*1), AX
	VADDPS Z18, Z31, Z0
	VADDPS Z16, Z0, Z0
	VADDPS Z19, Z0, Z0
	VADDPS Z17, Z0, Z0
	VADDPS Z16, Z31, Z1
	VADDPS Z17, Z1, Z1
	STOREROW
	CMPQ R10, $2
	JLT avebnext
	ADDQ R9, AX
	VADDPS Z19, Z31, Z0
	VADDPS Z17, Z0, Z0
	VADDPS Z17, Z31, Z1
	STOREROW

avebnext:
	ADDQ $8, BX
	ADDQ $128, R14
	DECQ CX
	JNZ avebchunk
	LEAQ (SI)(R9*2), SI
	ADDQ R11, DI
	SUBQ $2, R10
	MOVL $0xffff, AX
	KMOVW AX, K6
	DECQ R12
	JNZ avebrow
	SUBQ R11, DI                      // t ran to oh: back to the next plane's row 0
	MOVQ h+40(FP), AX
	IMULQ R9, AX
	MOVQ plane-8(SP), SI
	ADDQ AX, SI
	MOVQ SI, plane-8(SP)
	DECQ left-16(SP)
	JNZ avebplane
	VZEROUPPER
	RET

// MAXADD adds src to the lanes of acc whose window's argmax i (ints) is
// the element's position p.
#define MAXADD(i, p, src, acc) \
	VPCMPEQD i, p, K4; \
	VADDPS   src, acc, K4, acc

// func maxPool3s2BackAVX512(dy, dx, idx *float32, n, w, h, oh, ow int, masks *uint16, chunks int)
//
// Writes dx as Caffe's MAX gradient: each window's dy added to the
// element its argmax (idx, as floats; -1 for none) names, window after
// window, from zero: every element written once, its windows (as in
// avePool3s2BackAVX512) looked at in Caffe's order.
TEXT ·maxPool3s2BackAVX512(SB), NOSPLIT, $24-80
	MOVQ dy+0(FP), DI
	MOVQ dx+8(FP), SI
	MOVQ idx+16(FP), DX
	MOVQ n+24(FP), AX
	MOVQ AX, left-16(SP)
	MOVQ SI, plane-8(SP)
	CONSTANTS
	MOVQ ow+56(FP), R11
	SHLQ $2, R11
	VMOVDQU32 pool3s2lo<>(SB), Z25
	MOVL $8, AX
	VPBROADCASTD AX, Z24
	VPADDD Z24, Z25, Z24
	VPXORD Z31, Z31, Z31
	VPTERNLOGD $0xff, Z26, Z26, Z26   // -1: no argmax
	MOVL $0xbf800000, AX
	VPBROADCASTD AX, Z8               // -1.0: idx past the row's windows

maxbplane:
	MOVQ h+40(FP), R10
	MOVQ oh+48(FP), R12
	INCQ R12
	KXORW K6, K6, K6
	MOVQ $0, pos-24(SP)               // position of row 2t

maxbrow:
	MOVL $0xffff, AX
	CMPQ R12, $1
	JNE maxbhasb
	XORL AX, AX

maxbhasb:
	KMOVW AX, K7
	MOVQ masks+64(FP), BX
	MOVQ chunks+72(FP), CX
	XORQ R14, R14
	VPXORD Z14, Z14, Z14              // the previous chunk's dy and idx
	VPXORD Z15, Z15, Z15
	VMOVDQA32 Z26, Z12
	VMOVDQA32 Z26, Z13
	MOVQ DI, R13
	SUBQ R11, R13

maxbchunk:
	KMOVW 0(BX), K1
	KMOVW 6(BX), K4
	KANDW K4, K6, K5
	KANDW K4, K7, K3
	MOVQ R14, R8
	SHRQ $1, R8
	VMOVUPS.Z (R13)(R8*1), K5, Z16    // window row t-1's dy
	VMOVUPS.Z (DI)(R8*1), K3, Z17     // window row t's
	MOVQ DX, AX
	SUBQ R11, AX
	VMOVAPS Z8, Z20
	VMOVUPS (AX)(R8*1), K5, Z20
	VCVTTPS2DQ Z20, Z20
	VMOVAPS Z8, Z21
	VMOVUPS (DX)(R8*1), K3, Z21
	VCVTTPS2DQ Z21, Z21
	VALIGND $15, Z14, Z16, Z18        // window j-1's, in lane j
	VALIGND $15, Z15, Z17, Z19
	VALIGND $15, Z12, Z20, Z22
	VALIGND $15, Z13, Z21, Z23
	VMOVAPS Z16, Z14
	VMOVAPS Z17, Z15
	VMOVDQA32 Z20, Z12
	VMOVDQA32 Z21, Z13
	CMPQ R10, $1
	JLT maxbnext
	KMOVW 2(BX), K2                   // STOREROW's second mask (K4: MAXADD's)
	MOVQ R14, R8
	SHRQ $2, R8
	ADDQ pos-24(SP), R8
	VPBROADCASTD R8, Z9
	VPADDD Z30, Z9, Z9                // row 2t's even columns
	VPADDD Z27, Z9, Z10               // its odd ones
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	MAXADD(Z22, Z9, Z18, Z0)
	MAXADD(Z20, Z9, Z16, Z0)
	MAXADD(Z23, Z9, Z19, Z0)
	MAXADD(Z21, Z9, Z17, Z0)
	MAXADD(Z20, Z10, Z16, Z1)
	MAXADD(Z21, Z10, Z17, Z1)
	LEAQ (SI)(R14*1), AX
	STOREROW
	CMPQ R10, $2
	JLT maxbnext
	ADDQ R9, AX
	VPADDD Z28, Z9, Z9                // row 2t+1's
	VPADDD Z28, Z10, Z10
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	MAXADD(Z23, Z9, Z19, Z0)
	MAXADD(Z21, Z9, Z17, Z0)
	MAXADD(Z21, Z10, Z17, Z1)
	STOREROW

maxbnext:
	ADDQ $8, BX
	ADDQ $128, R14
	DECQ CX
	JNZ maxbchunk
	LEAQ (SI)(R9*2), SI
	ADDQ R11, DI
	ADDQ R11, DX
	MOVQ w+32(FP), AX
	SHLQ $1, AX
	ADDQ AX, pos-24(SP)
	SUBQ $2, R10
	MOVL $0xffff, AX
	KMOVW AX, K6
	DECQ R12
	JNZ maxbrow
	SUBQ R11, DI
	SUBQ R11, DX
	MOVQ h+40(FP), AX
	IMULQ R9, AX
	MOVQ plane-8(SP), SI
	ADDQ AX, SI
	MOVQ SI, plane-8(SP)
	DECQ left-16(SP)
	JNZ maxbplane
	VZEROUPPER
	RET
