//go:build amd64 && !purego

#include "textflag.h"

// Row kernels of the host's broadcasts, over n float32 values (a multiple
// of 16), each product rounded before a sum, as the Go loops they stand
// for (no fused multiply-add).

// func mulRowF32AVX512(x, y unsafe.Pointer, n int, f float32)
// y = x * f
TEXT ·mulRowF32AVX512(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VBROADCASTSS f+24(FP), Z1
mul:
	VMULPS (SI), Z1, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ mul
	VZEROUPPER
	RET

// func mulAddRowF32AVX512(x, y unsafe.Pointer, n int, f, b float32)
// y = x * f + b
TEXT ·mulAddRowF32AVX512(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VBROADCASTSS f+24(FP), Z1
	VBROADCASTSS b+28(FP), Z2
muladd:
	VMULPS (SI), Z1, Z0
	VADDPS Z2, Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ muladd
	VZEROUPPER
	RET

// func axpyRowF32AVX512(x, y unsafe.Pointer, n int, f float32)
// y += x * f
TEXT ·axpyRowF32AVX512(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VBROADCASTSS f+24(FP), Z1
axpy:
	VMULPS (SI), Z1, Z0
	VADDPS (DI), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ axpy
	VZEROUPPER
	RET
