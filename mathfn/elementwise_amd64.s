//go:build amd64 && !purego

#include "textflag.h"

// Element-wise y = a op b over n float32 values (a multiple of 16): the
// IEEE operations, correctly rounded, as the Go loops compute them.

#define BINARY(name, op) \
TEXT name(SB), NOSPLIT, $0-32 \
	MOVQ a+0(FP), SI \
	MOVQ b+8(FP), DX \
	MOVQ y+16(FP), DI \
	MOVQ n+24(FP), CX \
loop: \
	VMOVUPS (SI), Z0 \
	op (DX), Z0, Z0 \
	VMOVUPS Z0, (DI) \
	ADDQ $64, SI \
	ADDQ $64, DX \
	ADDQ $64, DI \
	SUBQ $16, CX \
	JNZ loop \
	VZEROUPPER \
	RET

// func addF32AVX512(a, b, y unsafe.Pointer, n int)
BINARY(·addF32AVX512, VADDPS)

// func subF32AVX512(a, b, y unsafe.Pointer, n int)
BINARY(·subF32AVX512, VSUBPS)

// func mulF32AVX512(a, b, y unsafe.Pointer, n int)
BINARY(·mulF32AVX512, VMULPS)

// func divF32AVX512(a, b, y unsafe.Pointer, n int)
BINARY(·divF32AVX512, VDIVPS)
