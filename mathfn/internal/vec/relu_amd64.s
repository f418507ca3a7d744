//go:build amd64 && !purego

#include "textflag.h"

// The zero-slope ReLU, y = max(x, 0) + 0 * min(x, 0) as Caffe computes it,
// over n values (a multiple of the lanes). VMAXPS with 0 as its first
// source returns the second, x, unless 0 > x: x itself for a positive x,
// a NaN and -0, +0 for a negative x; of Caffe's results only -Inf's (0 *
// -Inf: the default NaN) then differs, and is put in by a compare.

// func reluF32AVX512(x, y unsafe.Pointer, n int)
TEXT ·reluF32AVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VPXORD Z0, Z0, Z0
	MOVL $0xff800000, AX // -Inf
	VPBROADCASTD AX, Z1
	MOVL $0xffc00000, AX // the default NaN
	VPBROADCASTD AX, Z2
loop32:
	VMOVUPS (SI), Z3
	VMAXPS Z3, Z0, Z4
	VPCMPEQD Z1, Z3, K1
	VMOVDQU32 Z2, K1, Z4
	VMOVUPS Z4, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ loop32
	VZEROUPPER
	RET

// func reluF64AVX512(x, y unsafe.Pointer, n int)
TEXT ·reluF64AVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VPXORQ Z0, Z0, Z0
	MOVQ $0xfff0000000000000, AX // -Inf
	VPBROADCASTQ AX, Z1
	MOVQ $0xfff8000000000000, AX // the default NaN
	VPBROADCASTQ AX, Z2
loop64:
	VMOVUPD (SI), Z3
	VMAXPD Z3, Z0, Z4
	VPCMPEQQ Z1, Z3, K1
	VMOVDQU64 Z2, K1, Z4
	VMOVUPD Z4, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $8, CX
	JNZ loop64
	VZEROUPPER
	RET
