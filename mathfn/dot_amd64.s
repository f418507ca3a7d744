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

// func sdot1x4AVX2(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer)
// One row of A, 4 of B, 16 steps a round into two sets of 4 accumulators
// (a matrix-vector product: B streams from memory, and where it is in
// cache the two sets keep two products of each row in flight).
TEXT ·sdot1x4AVX2(SB), NOSPLIT, $8-48
	STMXCSR mxcsr-4(SP)
	MOVL mxcsr-4(SP), AX
	ORL $0x8040, AX
	MOVL AX, flush-8(SP)
	LDMXCSR flush-8(SP)
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ b+24(FP), BX
	MOVQ ldb+32(FP), R9
	MOVQ out+40(FP), DI
	SHLQ $2, R9
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
	XORQ DX, DX
	MOVQ CX, R12
	SUBQ $16, R12

d1_loop16:
	CMPQ DX, R12
	JGT  d1_tail
	VMOVUPS (AX)(DX*4), Y8
	VMOVUPS 32(AX)(DX*4), Y9
	VFMADD231PS (BX)(DX*4), Y8, Y0
	VFMADD231PS (R13)(DX*4), Y8, Y1
	VFMADD231PS (R14)(DX*4), Y8, Y2
	VFMADD231PS (SI)(DX*4), Y8, Y3
	VFMADD231PS 32(BX)(DX*4), Y9, Y4
	VFMADD231PS 32(R13)(DX*4), Y9, Y5
	VFMADD231PS 32(R14)(DX*4), Y9, Y6
	VFMADD231PS 32(SI)(DX*4), Y9, Y7
	ADDQ $16, DX
	JMP  d1_loop16

d1_tail:
	CMPQ DX, CX
	JGE  d1_store
	VMOVUPS (AX)(DX*4), Y8
	VFMADD231PS (BX)(DX*4), Y8, Y0
	VFMADD231PS (R13)(DX*4), Y8, Y1
	VFMADD231PS (R14)(DX*4), Y8, Y2
	VFMADD231PS (SI)(DX*4), Y8, Y3

d1_store:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	LDMXCSR mxcsr-4(SP)
	VZEROUPPER
	RET
