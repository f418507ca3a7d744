//go:build amd64 && !purego

#include "textflag.h"

// The ReLU kernels for CPUs with AVX2 but not AVX-512, eight float32 at a
// time over n values (a multiple of 8).

// func reluF32AVX2(x, y unsafe.Pointer, n int)
// The zero-slope forward pass as reluF32AVX512 computes it: VMAXPS with 0
// first returns x unless 0 > x (a NaN and -0 stay); -Inf, which the
// maximum makes +0, becomes the default NaN by OR-ing in the NaN's bits
// where x is -Inf.
TEXT ·reluF32AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	MOVL $0xff800000, AX // -Inf
	MOVL AX, X1
	VPBROADCASTD X1, Y1
	MOVL $0xffc00000, AX // the default NaN
	MOVL AX, X2
	VPBROADCASTD X2, Y2

relu_loop:
	VMOVUPS (SI), Y3
	VMAXPS Y3, Y0, Y4
	VPCMPEQD Y1, Y3, Y5
	VPAND Y2, Y5, Y5
	VPOR Y5, Y4, Y4
	VMOVUPS Y4, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ relu_loop
	VZEROUPPER
	RET

// func reluBackF32AVX2(x, dy, dx unsafe.Pointer, n int, pos, neg, nan float32)
// dx = dy * f, f = pos where x > 0, neg where x <= 0, nan where x is a
// NaN (the caller's factors, computed as its Go loop computes them).
TEXT ·reluBackF32AVX2(SB), NOSPLIT, $0-44
	MOVQ x+0(FP), SI
	MOVQ dy+8(FP), BX
	MOVQ dx+16(FP), DI
	MOVQ n+24(FP), CX
	VBROADCASTSS pos+32(FP), Y1
	VBROADCASTSS neg+36(FP), Y2
	VBROADCASTSS nan+40(FP), Y3
	VXORPS Y0, Y0, Y0

back_loop:
	VMOVUPS (SI), Y4
	VCMPPS $0x1e, Y0, Y4, Y5 // x > 0, false for a NaN
	VCMPPS $0x12, Y0, Y4, Y6 // x <= 0, false for a NaN
	VORPS Y5, Y6, Y7         // ordered
	VANDPS Y1, Y5, Y5
	VANDPS Y2, Y6, Y6
	VANDNPS Y3, Y7, Y7       // nan where unordered
	VORPS Y5, Y6, Y6
	VORPS Y7, Y6, Y6
	VMULPS (BX), Y6, Y6
	VMOVUPS Y6, (DI)
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ back_loop
	VZEROUPPER
	RET
