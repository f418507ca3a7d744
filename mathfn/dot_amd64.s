//go:build amd64 && !purego

#include "textflag.h"

// The AVX2 dot kernels of products with few rows of op(A) by a transposed
// B (an inner product's forward pass at a small batch): dot products of
// rows of A with 4 rows of B, both read in place along their rows, over k
// (a multiple of 8), as vectors of 8 partial sums stored to out, the
// vector of A's row i and B's row j at out[(i*4+j)*8]. As the GEMM
// kernels, they run with flush-to-zero and denormals-are-zero.

// func sdot3x4AVX2(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer)
// 3 rows of A (in Y12-Y14 each step), 4 of B (memory operands), 12
// accumulators.
TEXT ·sdot3x4AVX2(SB), NOSPLIT, $8-48
	STMXCSR mxcsr-4(SP)
	MOVL mxcsr-4(SP), AX
	ORL $0x8040, AX
	MOVL AX, flush-8(SP)
	LDMXCSR flush-8(SP)
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), BX
	MOVQ ldb+32(FP), R9
	MOVQ out+40(FP), DI
	SHLQ $2, R8
	SHLQ $2, R9
	LEAQ (AX)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	LEAQ (BX)(R9*1), R13
	LEAQ (R13)(R9*1), R14
	LEAQ (R14)(R9*1), SI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ DX, DX

d3_loop:
	CMPQ DX, CX
	JGE  d3_store
	VMOVUPS (AX)(DX*4), Y12
	VMOVUPS (R10)(DX*4), Y13
	VMOVUPS (R11)(DX*4), Y14
	VMOVUPS (BX)(DX*4), Y15
	VFMADD231PS Y15, Y12, Y0
	VFMADD231PS Y15, Y13, Y4
	VFMADD231PS Y15, Y14, Y8
	VMOVUPS (R13)(DX*4), Y15
	VFMADD231PS Y15, Y12, Y1
	VFMADD231PS Y15, Y13, Y5
	VFMADD231PS Y15, Y14, Y9
	VMOVUPS (R14)(DX*4), Y15
	VFMADD231PS Y15, Y12, Y2
	VFMADD231PS Y15, Y13, Y6
	VFMADD231PS Y15, Y14, Y10
	VMOVUPS (SI)(DX*4), Y15
	VFMADD231PS Y15, Y12, Y3
	VFMADD231PS Y15, Y13, Y7
	VFMADD231PS Y15, Y14, Y11
	ADDQ $8, DX
	JMP  d3_loop

d3_store:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VMOVUPS Y8, 256(DI)
	VMOVUPS Y9, 288(DI)
	VMOVUPS Y10, 320(DI)
	VMOVUPS Y11, 352(DI)
	LDMXCSR mxcsr-4(SP)
	VZEROUPPER
	RET

// The one-row kernels of both widths: DOT1X4_ENTRY sets flush-to-zero
// and loads the arguments (A's row at AX, B's rows at BX, R13, R14 and
// SI, the step in DX from 0, k in CX and R12); DOT1X4_STEP adds the
// products of one vector of A's row (at byte offset off of the step) to
// the accumulators s0-s3; DOT1X4_EXIT sums the two sets, stores the 4
// vectors w bytes apart and restores MXCSR.
#define DOT1X4_ENTRY \
	STMXCSR mxcsr-4(SP); \
	MOVL mxcsr-4(SP), AX; \
	ORL $0x8040, AX; \
	MOVL AX, flush-8(SP); \
	LDMXCSR flush-8(SP); \
	MOVQ k+0(FP), CX; \
	MOVQ a+8(FP), AX; \
	MOVQ b+24(FP), BX; \
	MOVQ ldb+32(FP), R9; \
	MOVQ out+40(FP), DI; \
	SHLQ $2, R9; \
	LEAQ (BX)(R9*1), R13; \
	LEAQ (R13)(R9*1), R14; \
	LEAQ (R14)(R9*1), SI; \
	XORQ DX, DX; \
	MOVQ CX, R12

#define DOT1X4_ZERO(op, s0, s1, s2, s3) \
	op s0, s0, s0; \
	op s1, s1, s1; \
	op s2, s2, s2; \
	op s3, s3, s3

#define DOT1X4_STEP(off, va, s0, s1, s2, s3) \
	VMOVUPS off(AX)(DX*4), va; \
	VFMADD231PS off(BX)(DX*4), va, s0; \
	VFMADD231PS off(R13)(DX*4), va, s1; \
	VFMADD231PS off(R14)(DX*4), va, s2; \
	VFMADD231PS off(SI)(DX*4), va, s3

#define DOT1X4_EXIT(s0, s1, s2, s3, s4, s5, s6, s7, w1, w2, w3) \
	VADDPS s4, s0, s0; \
	VADDPS s5, s1, s1; \
	VADDPS s6, s2, s2; \
	VADDPS s7, s3, s3; \
	VMOVUPS s0, 0(DI); \
	VMOVUPS s1, w1(DI); \
	VMOVUPS s2, w2(DI); \
	VMOVUPS s3, w3(DI); \
	LDMXCSR mxcsr-4(SP); \
	VZEROUPPER

// DOT1X4 is a one-row kernel's body in vectors of width bytes (step
// values each): two sets of 4 accumulators (s0-s3 and s4-s7, zeroed by
// zero), A's row through va and vb, two vectors a round, one in the tail;
// loop, tail and store are its labels.
#define DOT1X4(zero, va, vb, s0, s1, s2, s3, s4, s5, s6, s7, step, width, loop, tail, store) \
	DOT1X4_ENTRY; \
	SUBQ $(2*step), R12; \
	DOT1X4_ZERO(zero, s0, s1, s2, s3); \
	DOT1X4_ZERO(zero, s4, s5, s6, s7); \
loop: \
	CMPQ DX, R12; \
	JGT  tail; \
	DOT1X4_STEP(0, va, s0, s1, s2, s3); \
	DOT1X4_STEP(width, vb, s4, s5, s6, s7); \
	ADDQ $(2*step), DX; \
	JMP  loop; \
tail: \
	CMPQ DX, CX; \
	JGE  store; \
	DOT1X4_STEP(0, va, s0, s1, s2, s3); \
store: \
	DOT1X4_EXIT(s0, s1, s2, s3, s4, s5, s6, s7, width, 2*width, 3*width)

// func sdot1x4AVX2(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer)
// One row of A, 4 of B, 16 steps a round into two sets of 4 accumulators
// (a matrix-vector product: B streams from memory, and where it is in
// cache the two sets keep two products of each row in flight).
TEXT ·sdot1x4AVX2(SB), NOSPLIT, $8-48
	DOT1X4(VXORPS, Y8, Y9, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, 8, 32, d1_loop, d1_tail, d1_store)
	RET

// func sdot1x4AVX512(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer)
// sdot1x4AVX2 in 16 lanes: one row of A, 4 of B, 32 steps a round (k a
// multiple of 16), the 4 vectors at out[j*16]. The 4x4 kernel at one row
// reads three rows of zeros beside it, four times the row's bytes, from
// the L2 cache while B streams in: a matrix-vector product ran at half
// the bandwidth of a plain read.
TEXT ·sdot1x4AVX512(SB), NOSPLIT, $8-48
	DOT1X4(VPXORD, Z8, Z9, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, 16, 64, e1_loop, e1_tail, e1_store)
	RET
