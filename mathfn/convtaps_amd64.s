//go:build amd64 && !purego

#include "textflag.h"

// TAPSSUM4 stores the sums of the lanes of p, q, r and s at o0, o1, o2
// and o3 (bytes) from R8: halves of pairs of them added (128-bit lanes
// moved by VSHUFF64X2) until one vector holds a 128-bit lane of each,
// then each lane's four values added.
#define TAPSSUM4(p, q, r, s, o0, o1, o2, o3) \
	VSHUFF64X2    $0x44, q, p, Z24; \
	VSHUFF64X2    $0xee, q, p, Z25; \
	VADDPS        Z25, Z24, Z24; \
	VSHUFF64X2    $0x44, s, r, Z25; \
	VSHUFF64X2    $0xee, s, r, Z26; \
	VADDPS        Z26, Z25, Z25; \
	VSHUFF64X2    $0x88, Z25, Z24, Z26; \
	VSHUFF64X2    $0xdd, Z25, Z24, Z27; \
	VADDPS        Z27, Z26, Z26; \
	VPERMILPS     $0x4e, Z26, Z27; \
	VADDPS        Z27, Z26, Z26; \
	VPERMILPS     $0xb1, Z26, Z27; \
	VADDPS        Z27, Z26, Z26; \
	VMOVSS        X26, o0(R8); \
	VEXTRACTF32X4 $1, Z26, X27; \
	VMOVSS        X27, o1(R8); \
	VEXTRACTF32X4 $2, Z26, X27; \
	VMOVSS        X27, o2(R8); \
	VEXTRACTF32X4 $3, Z26, X27; \
	VMOVSS        X27, o3(R8)

// TAPSZERO clears the 24 accumulators.
#define TAPSZERO \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11; \
	VPXORD Z12, Z12, Z12; \
	VPXORD Z13, Z13, Z13; \
	VPXORD Z14, Z14, Z14; \
	VPXORD Z15, Z15, Z15; \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23

// TAPSSUMS stores the 24 accumulators' sums at R8: Z(4j+i) at out[6i+j].
#define TAPSSUMS \
	TAPSSUM4(Z0, Z1, Z2, Z3, 0, 24, 48, 72); \
	TAPSSUM4(Z4, Z5, Z6, Z7, 4, 28, 52, 76); \
	TAPSSUM4(Z8, Z9, Z10, Z11, 8, 32, 56, 80); \
	TAPSSUM4(Z12, Z13, Z14, Z15, 12, 36, 60, 84); \
	TAPSSUM4(Z16, Z17, Z18, Z19, 16, 40, 64, 88); \
	TAPSSUM4(Z20, Z21, Z22, Z23, 20, 44, 68, 92)

// TAPSFMA4 adds the 4 rows Z24-Z27 times b to accumulators d0-d3.
#define TAPSFMA4(b, d0, d1, d2, d3) \
	VFMADD231PS b, Z24, d0; \
	VFMADD231PS b, Z25, d1; \
	VFMADD231PS b, Z26, d2; \
	VFMADD231PS b, Z27, d3

// func convTapsDotAVX512(a unsafe.Pointer, lda int, x unsafe.Pointer, taps *int32, images, rows, vecs, rowSkip, imageSkip int, c unsafe.Pointer, ldc, blocks, cols int)
//
// The dot products of a convolution's weight gradient (see
// GemmConvTapsDot) for blocks blocks of 4 rows of the top gradient (lda
// bytes apart, the blocks 4*lda) against 6 taps whose places in the
// padded images are taps[0..5] (elements, from x), over images images of
// rows output rows of vecs vectors of 16 positions each; the first cols
// of each row's 6 sums are added to C (rows ldc bytes apart). The top
// gradient's positions run on without a gap, 64 bytes a vector; x moves
// on 64 bytes a vector, rowSkip more at the end of a row and imageSkip
// more at the end of an image. Accumulator Z(4j+i) holds row i against
// tap j. Denormals count as zero, as in the GEMM kernels (gemmgen's
// flushDenormals: training makes them, and each costs an assist).
TEXT ·convTapsDotAVX512(SB), NOSPLIT, $128-104
	STMXCSR mxcsr-124(SP)             // flush-to-zero, denormals-are-zero, as the GEMM kernels
	MOVL mxcsr-124(SP), AX
	ORL $0x8040, AX
	MOVL AX, flush-128(SP)
	LDMXCSR flush-128(SP)
	MOVQ cols+96(FP), CX
	MOVL $1, R13
	SHLL CX, R13
	DECL R13
	KMOVW R13, K1                     // the block's taps inside the matrix
	MOVQ a+0(FP), AX
	MOVQ AX, abase-120(SP)
	MOVQ c+72(FP), AX
	MOVQ AX, cptr-112(SP)
	MOVQ blocks+88(FP), AX
	MOVQ AX, left-104(SP)
	MOVQ lda+8(FP), BX
	LEAQ (BX)(BX*2), CX
	MOVQ taps+24(FP), R8
	MOVLQSX 0(R8), SI
	MOVLQSX 4(R8), DI
	MOVLQSX 8(R8), R9
	MOVLQSX 12(R8), R10
	MOVLQSX 16(R8), R11
	MOVLQSX 20(R8), R12

convTapsDotAVX512_block:
	MOVQ abase-120(SP), AX
	MOVQ x+16(FP), DX
	TAPSZERO
	MOVQ images+32(FP), R13

tapsimage:
	MOVQ rows+40(FP), R14

tapsrow:
	MOVQ vecs+48(FP), R8

tapsvec:
	VMOVUPS (AX), Z24
	VMOVUPS (AX)(BX*1), Z25
	VMOVUPS (AX)(BX*2), Z26
	VMOVUPS (AX)(CX*1), Z27
	VMOVUPS (DX)(SI*4), Z28
	VMOVUPS (DX)(DI*4), Z29
	TAPSFMA4(Z28, Z0, Z1, Z2, Z3)
	VMOVUPS (DX)(R9*4), Z28
	TAPSFMA4(Z29, Z4, Z5, Z6, Z7)
	VMOVUPS (DX)(R10*4), Z29
	TAPSFMA4(Z28, Z8, Z9, Z10, Z11)
	VMOVUPS (DX)(R11*4), Z28
	TAPSFMA4(Z29, Z12, Z13, Z14, Z15)
	VMOVUPS (DX)(R12*4), Z29
	TAPSFMA4(Z28, Z16, Z17, Z18, Z19)
	TAPSFMA4(Z29, Z20, Z21, Z22, Z23)
	ADDQ $64, AX
	ADDQ $64, DX
	DECQ R8
	JNZ tapsvec
	ADDQ rowSkip+56(FP), DX
	DECQ R14
	JNZ tapsrow
	ADDQ imageSkip+64(FP), DX
	DECQ R13
	JNZ tapsimage
	LEAQ out-96(SP), R8
	TAPSSUMS
	LEAQ out-96(SP), R14              // the sums added to C's 4 rows
	MOVQ cptr-112(SP), R8
	MOVQ ldc+80(FP), R13
	VMOVUPS.Z 0(R14), K1, Z0
	VMOVUPS.Z (R8), K1, Z1
	VADDPS Z0, Z1, Z1
	VMOVUPS Z1, K1, (R8)
	ADDQ R13, R8
	VMOVUPS.Z 24(R14), K1, Z0
	VMOVUPS.Z (R8), K1, Z1
	VADDPS Z0, Z1, Z1
	VMOVUPS Z1, K1, (R8)
	ADDQ R13, R8
	VMOVUPS.Z 48(R14), K1, Z0
	VMOVUPS.Z (R8), K1, Z1
	VADDPS Z0, Z1, Z1
	VMOVUPS Z1, K1, (R8)
	ADDQ R13, R8
	VMOVUPS.Z 72(R14), K1, Z0
	VMOVUPS.Z (R8), K1, Z1
	VADDPS Z0, Z1, Z1
	VMOVUPS Z1, K1, (R8)
	ADDQ R13, R8
	MOVQ R8, cptr-112(SP)
	MOVQ abase-120(SP), AX
	LEAQ (AX)(BX*4), AX
	MOVQ AX, abase-120(SP)
	DECQ left-104(SP)
	JNZ convTapsDotAVX512_block
	LDMXCSR mxcsr-124(SP)
	VZEROUPPER
	RET

// func convTapsDot8AVX512(a unsafe.Pointer, lda int, x unsafe.Pointer, taps *int32, images, pairs, rowStep, imageSkip int, c unsafe.Pointer, ldc, blocks, cols int)
//
// convTapsDotAVX512 for output rows of 8 positions: a vector holds two
// rows, its halves loaded rowStep bytes apart in the padded image (pairs
// of rows an image; x moves on 2*rowStep bytes a vector, imageSkip more
// at the end of an image).
TEXT ·convTapsDot8AVX512(SB), NOSPLIT, $128-96
	STMXCSR mxcsr-124(SP)             // flush-to-zero, denormals-are-zero, as the GEMM kernels
	MOVL mxcsr-124(SP), AX
	ORL $0x8040, AX
	MOVL AX, flush-128(SP)
	LDMXCSR flush-128(SP)
	MOVQ cols+88(FP), CX
	MOVL $1, R13
	SHLL CX, R13
	DECL R13
	KMOVW R13, K1                     // the block's taps inside the matrix
	MOVQ a+0(FP), AX
	MOVQ AX, abase-120(SP)
	MOVQ c+64(FP), AX
	MOVQ AX, cptr-112(SP)
	MOVQ blocks+80(FP), AX
	MOVQ AX, left-104(SP)
	MOVQ lda+8(FP), BX
	LEAQ (BX)(BX*2), CX
	MOVQ taps+24(FP), R8
	MOVLQSX 0(R8), SI
	MOVLQSX 4(R8), DI
	MOVLQSX 8(R8), R9
	MOVLQSX 12(R8), R10
	MOVLQSX 16(R8), R11
	MOVLQSX 20(R8), R12

convTapsDot8AVX512_block:
	MOVQ abase-120(SP), AX
	MOVQ x+16(FP), DX
	TAPSZERO
	MOVQ images+32(FP), R13

taps8image:
	MOVQ pairs+40(FP), R8

taps8pair:
	MOVQ rowStep+48(FP), R14
	ADDQ DX, R14
	VMOVUPS (AX), Z24
	VMOVUPS (AX)(BX*1), Z25
	VMOVUPS (AX)(BX*2), Z26
	VMOVUPS (AX)(CX*1), Z27
	VMOVUPS (DX)(SI*4), Y28
	VINSERTF32X8 $1, (R14)(SI*4), Z28, Z28
	VMOVUPS (DX)(DI*4), Y29
	VINSERTF32X8 $1, (R14)(DI*4), Z29, Z29
	TAPSFMA4(Z28, Z0, Z1, Z2, Z3)
	VMOVUPS (DX)(R9*4), Y28
	VINSERTF32X8 $1, (R14)(R9*4), Z28, Z28
	TAPSFMA4(Z29, Z4, Z5, Z6, Z7)
	VMOVUPS (DX)(R10*4), Y29
	VINSERTF32X8 $1, (R14)(R10*4), Z29, Z29
	TAPSFMA4(Z28, Z8, Z9, Z10, Z11)
	VMOVUPS (DX)(R11*4), Y28
	VINSERTF32X8 $1, (R14)(R11*4), Z28, Z28
	TAPSFMA4(Z29, Z12, Z13, Z14, Z15)
	VMOVUPS (DX)(R12*4), Y29
	VINSERTF32X8 $1, (R14)(R12*4), Z29, Z29
	TAPSFMA4(Z28, Z16, Z17, Z18, Z19)
	TAPSFMA4(Z29, Z20, Z21, Z22, Z23)
	ADDQ $64, AX
	MOVQ rowStep+48(FP), R14
	LEAQ (DX)(R14*2), DX
	DECQ R8
	JNZ taps8pair
	ADDQ imageSkip+56(FP), DX
	DECQ R13
	JNZ taps8image
	LEAQ out-96(SP), R8
	TAPSSUMS
	LEAQ out-96(SP), R14              // the sums added to C's 4 rows
	MOVQ cptr-112(SP), R8
	MOVQ ldc+72(FP), R13
	VMOVUPS.Z 0(R14), K1, Z0
	VMOVUPS.Z (R8), K1, Z1
	VADDPS Z0, Z1, Z1
	VMOVUPS Z1, K1, (R8)
	ADDQ R13, R8
	VMOVUPS.Z 24(R14), K1, Z0
	VMOVUPS.Z (R8), K1, Z1
	VADDPS Z0, Z1, Z1
	VMOVUPS Z1, K1, (R8)
	ADDQ R13, R8
	VMOVUPS.Z 48(R14), K1, Z0
	VMOVUPS.Z (R8), K1, Z1
	VADDPS Z0, Z1, Z1
	VMOVUPS Z1, K1, (R8)
	ADDQ R13, R8
	VMOVUPS.Z 72(R14), K1, Z0
	VMOVUPS.Z (R8), K1, Z1
	VADDPS Z0, Z1, Z1
	VMOVUPS Z1, K1, (R8)
	ADDQ R13, R8
	MOVQ R8, cptr-112(SP)
	MOVQ abase-120(SP), AX
	LEAQ (AX)(BX*4), AX
	MOVQ AX, abase-120(SP)
	DECQ left-104(SP)
	JNZ convTapsDot8AVX512_block
	LDMXCSR mxcsr-124(SP)
	VZEROUPPER
	RET
