//go:build amd64 && !purego

#include "textflag.h"

// The direct depthwise convolution's row kernels (depthwise.go), AVX2 and
// FMA, float32. Written by hand: each is one loop, and the nine tap
// addresses live in general registers (SI, BX, R8-R13, AX) indexed by the
// byte offset DX.

#define LOADTAPS \
	MOVQ 0(AX), SI \
	MOVQ 8(AX), BX \
	MOVQ 16(AX), R8 \
	MOVQ 24(AX), R9 \
	MOVQ 32(AX), R10 \
	MOVQ 40(AX), R11 \
	MOVQ 48(AX), R12 \
	MOVQ 56(AX), R13 \
	MOVQ 64(AX), AX

// func taps9AVX2(out unsafe.Pointer, ptrs *[9]unsafe.Pointer, w *[9]float32, n int, bias float32, relu int)
//
// out[x] = ((bias + w0 p0 + w3 p3 + w6 p6) + (w1 p1 + w4 p4 + w7 p7)) + (w2 p2 + w5 p5 + w8 p8):
// three chains of FMAs per vector (Y9-Y11, and Y12-Y14 for the second
// vector of a 16-wide step), weights broadcast in Y0-Y8, the bias in Y15.
// The ReLU keeps NaN (VMAXPS returns its second source for NaN).
TEXT ·taps9AVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ ptrs+8(FP), AX
	MOVQ w+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS bias+32(FP), Y15
	VBROADCASTSS 0(DX), Y0
	VBROADCASTSS 4(DX), Y1
	VBROADCASTSS 8(DX), Y2
	VBROADCASTSS 12(DX), Y3
	VBROADCASTSS 16(DX), Y4
	VBROADCASTSS 20(DX), Y5
	VBROADCASTSS 24(DX), Y6
	VBROADCASTSS 28(DX), Y7
	VBROADCASTSS 32(DX), Y8
	LOADTAPS
	XORQ DX, DX

loop16:
	CMPQ CX, $16
	JLT tail8
	VMOVAPS Y15, Y9
	VMOVAPS Y15, Y12
	VFMADD231PS (SI)(DX*1), Y0, Y9
	VFMADD231PS 32(SI)(DX*1), Y0, Y12
	VMULPS (BX)(DX*1), Y1, Y10
	VMULPS 32(BX)(DX*1), Y1, Y13
	VMULPS (R8)(DX*1), Y2, Y11
	VMULPS 32(R8)(DX*1), Y2, Y14
	VFMADD231PS (R9)(DX*1), Y3, Y9
	VFMADD231PS 32(R9)(DX*1), Y3, Y12
	VFMADD231PS (R10)(DX*1), Y4, Y10
	VFMADD231PS 32(R10)(DX*1), Y4, Y13
	VFMADD231PS (R11)(DX*1), Y5, Y11
	VFMADD231PS 32(R11)(DX*1), Y5, Y14
	VFMADD231PS (R12)(DX*1), Y6, Y9
	VFMADD231PS 32(R12)(DX*1), Y6, Y12
	VFMADD231PS (R13)(DX*1), Y7, Y10
	VFMADD231PS 32(R13)(DX*1), Y7, Y13
	VFMADD231PS (AX)(DX*1), Y8, Y11
	VFMADD231PS 32(AX)(DX*1), Y8, Y14
	VADDPS Y10, Y9, Y9
	VADDPS Y11, Y9, Y9
	VADDPS Y13, Y12, Y12
	VADDPS Y14, Y12, Y12
	CMPQ relu+40(FP), $0
	JEQ store16
	VXORPS Y10, Y10, Y10
	VMAXPS Y9, Y10, Y9
	VMAXPS Y12, Y10, Y12

store16:
	VMOVUPS Y9, (DI)(DX*1)
	VMOVUPS Y12, 32(DI)(DX*1)
	ADDQ $64, DX
	SUBQ $16, CX
	JMP loop16

tail8:
	CMPQ CX, $8
	JLT done
	VMOVAPS Y15, Y9
	VFMADD231PS (SI)(DX*1), Y0, Y9
	VMULPS (BX)(DX*1), Y1, Y10
	VMULPS (R8)(DX*1), Y2, Y11
	VFMADD231PS (R9)(DX*1), Y3, Y9
	VFMADD231PS (R10)(DX*1), Y4, Y10
	VFMADD231PS (R11)(DX*1), Y5, Y11
	VFMADD231PS (R12)(DX*1), Y6, Y9
	VFMADD231PS (R13)(DX*1), Y7, Y10
	VFMADD231PS (AX)(DX*1), Y8, Y11
	VADDPS Y10, Y9, Y9
	VADDPS Y11, Y9, Y9
	CMPQ relu+40(FP), $0
	JEQ store8
	VXORPS Y10, Y10, Y10
	VMAXPS Y9, Y10, Y9

store8:
	VMOVUPS Y9, (DI)(DX*1)

done:
	VZEROUPPER
	RET

// func dots9AVX2(dy unsafe.Pointer, ptrs *[9]unsafe.Pointer, n int, lanes *[72]float32)
//
// Nine accumulators (Y0-Y8), one per tap, of 8 partial sums each.
TEXT ·dots9AVX2(SB), NOSPLIT, $0-32
	MOVQ dy+0(FP), DI
	MOVQ ptrs+8(FP), AX
	MOVQ n+16(FP), CX
	LOADTAPS
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	XORQ DX, DX

dotloop:
	VMOVUPS (DI)(DX*1), Y9
	VFMADD231PS (SI)(DX*1), Y9, Y0
	VFMADD231PS (BX)(DX*1), Y9, Y1
	VFMADD231PS (R8)(DX*1), Y9, Y2
	VFMADD231PS (R9)(DX*1), Y9, Y3
	VFMADD231PS (R10)(DX*1), Y9, Y4
	VFMADD231PS (R11)(DX*1), Y9, Y5
	VFMADD231PS (R12)(DX*1), Y9, Y6
	VFMADD231PS (R13)(DX*1), Y9, Y7
	VFMADD231PS (AX)(DX*1), Y9, Y8
	ADDQ $32, DX
	SUBQ $8, CX
	JNZ dotloop
	MOVQ lanes+24(FP), DI
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	VMOVUPS Y8, 256(DI)
	VZEROUPPER
	RET

// One filter row of a stride-2 vector of 8 outputs (Taps9S2), at R12:
// the even columns (tap 0), odd (tap 1) and even from 2 on (tap 2),
// split by VSHUFPS within each 128-bit half, which leaves the outputs in
// the order 0 1 4 5 2 3 6 7 in every tap alike (VPERMPD puts them back
// once, at the end).
#define S2ROW(wa, wb, wc) \
	VMOVUPS (R12), Y12 \
	VSHUFPS $0x88, 32(R12), Y12, Y14 \
	VSHUFPS $0xDD, 32(R12), Y12, Y13 \
	VMOVUPS 8(R12), Y12 \
	VSHUFPS $0x88, 40(R12), Y12, Y12 \
	VFMADD231PS Y14, wa, Y9 \
	VFMADD231PS Y13, wb, Y10 \
	VFMADD231PS Y12, wc, Y11

// The 8 outputs whose first input is at R12, into Y9 (in order, the
// ReLU applied where AX is set).
#define S2VEC \
	VMOVAPS Y15, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11 \
	S2ROW(Y0, Y1, Y2) \
	ADDQ R10, R12 \
	S2ROW(Y3, Y4, Y5) \
	ADDQ R10, R12 \
	S2ROW(Y6, Y7, Y8) \
	VADDPS Y10, Y9, Y9 \
	VADDPS Y11, Y9, Y9 \
	TESTQ AX, AX \
	JEQ 3(PC) \
	VXORPS Y10, Y10, Y10 \
	VMAXPS Y9, Y10, Y9 \
	VPERMPD $0xD8, Y9, Y9

// func taps9S2AVX2(out, p unsafe.Pointer, w *[9]float32, rows, n, outStride, step, wp int, bias float32, relu int)
//
// Weights broadcast in Y0-Y8, the bias in Y15; the three partial sums in
// Y9-Y11 as taps9AVX2's. A row of 8 or more outputs ends with one more
// vector that overlaps the previous one (rewriting the same values); a
// shorter row goes through the 32 bytes of the frame, lane by lane.
TEXT ·taps9S2AVX2(SB), NOSPLIT, $32-80
	MOVQ out+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ w+16(FP), DX
	MOVQ rows+24(FP), CX
	MOVQ n+32(FP), BX
	MOVQ outStride+40(FP), R9
	MOVQ step+48(FP), R8
	MOVQ wp+56(FP), R10
	VBROADCASTSS bias+64(FP), Y15
	MOVQ relu+72(FP), AX
	VBROADCASTSS 0(DX), Y0
	VBROADCASTSS 4(DX), Y1
	VBROADCASTSS 8(DX), Y2
	VBROADCASTSS 12(DX), Y3
	VBROADCASTSS 16(DX), Y4
	VBROADCASTSS 20(DX), Y5
	VBROADCASTSS 24(DX), Y6
	VBROADCASTSS 28(DX), Y7
	VBROADCASTSS 32(DX), Y8
	// DX: the last full vector's first output (n-8).
	MOVQ BX, DX
	SUBQ $8, DX

s2row:
	TESTQ CX, CX
	JEQ s2done
	CMPQ BX, $8
	JLT s2short
	XORQ R11, R11

s2vec:
	CMPQ R11, DX
	JLE s2full
	MOVQ DX, R11 // the row's last vector, overlapping

s2full:
	LEAQ (SI)(R11*8), R12
	S2VEC
	VMOVUPS Y9, (DI)(R11*4)
	CMPQ R11, DX
	JGE s2next
	ADDQ $8, R11
	JMP s2vec

s2short:
	MOVQ SI, R12
	S2VEC
	VMOVUPS Y9, 0(SP)
	XORQ R11, R11

s2lane:
	MOVL (SP)(R11*4), R13
	MOVL R13, (DI)(R11*4)
	INCQ R11
	CMPQ R11, BX
	JLT s2lane

s2next:
	ADDQ R9, DI
	ADDQ R8, SI
	DECQ CX
	JMP s2row

s2done:
	VZEROUPPER
	RET
