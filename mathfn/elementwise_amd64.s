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

// Element-wise y = a * alpha, y = a * alpha + beta and y += a * alpha over
// n float32 values (a multiple of 16), each product rounded before a sum
// (no fused multiply-add). op src, Z0, Z0 finishes a product in Z0: a
// bitwise or with itself (nothing), adding beta, or adding y.
#define SCALAR(name, op, src) \
TEXT name(SB), NOSPLIT, $0-32 \
	MOVQ a+0(FP), SI \
	MOVQ y+8(FP), DI \
	MOVQ n+16(FP), CX \
	VBROADCASTSS alpha+24(FP), Z1 \
	VBROADCASTSS beta+28(FP), Z2 \
loop: \
	VMULPS (SI), Z1, Z0 \
	op src, Z0, Z0 \
	VMOVUPS Z0, (DI) \
	ADDQ $64, SI \
	ADDQ $64, DI \
	SUBQ $16, CX \
	JNZ loop \
	VZEROUPPER \
	RET

// func mulScalarF32AVX512(a, y unsafe.Pointer, n int, alpha, beta float32)
SCALAR(·mulScalarF32AVX512, VORPS, Z0)

// func mulAddScalarF32AVX512(a, y unsafe.Pointer, n int, alpha, beta float32)
SCALAR(·mulAddScalarF32AVX512, VADDPS, Z2)

// func addScaledF32AVX512(a, y unsafe.Pointer, n int, alpha, beta float32)
SCALAR(·addScaledF32AVX512, VADDPS, (DI))

// The AVX2 forms of BINARY and SCALAR, for CPUs without AVX-512: n a
// multiple of 8.
#define BINARY2(name, op) \
TEXT name(SB), NOSPLIT, $0-32 \
	MOVQ a+0(FP), SI \
	MOVQ b+8(FP), DX \
	MOVQ y+16(FP), DI \
	MOVQ n+24(FP), CX \
loop: \
	VMOVUPS (SI), Y0 \
	op (DX), Y0, Y0 \
	VMOVUPS Y0, (DI) \
	ADDQ $32, SI \
	ADDQ $32, DX \
	ADDQ $32, DI \
	SUBQ $8, CX \
	JNZ loop \
	VZEROUPPER \
	RET

// func addF32AVX2(a, b, y unsafe.Pointer, n int)
BINARY2(·addF32AVX2, VADDPS)

// func subF32AVX2(a, b, y unsafe.Pointer, n int)
BINARY2(·subF32AVX2, VSUBPS)

// func mulF32AVX2(a, b, y unsafe.Pointer, n int)
BINARY2(·mulF32AVX2, VMULPS)

// func divF32AVX2(a, b, y unsafe.Pointer, n int)
BINARY2(·divF32AVX2, VDIVPS)

#define SCALAR2(name, op, src) \
TEXT name(SB), NOSPLIT, $0-32 \
	MOVQ a+0(FP), SI \
	MOVQ y+8(FP), DI \
	MOVQ n+16(FP), CX \
	VBROADCASTSS alpha+24(FP), Y1 \
	VBROADCASTSS beta+28(FP), Y2 \
loop: \
	VMULPS (SI), Y1, Y0 \
	op src, Y0, Y0 \
	VMOVUPS Y0, (DI) \
	ADDQ $32, SI \
	ADDQ $32, DI \
	SUBQ $8, CX \
	JNZ loop \
	VZEROUPPER \
	RET

// func mulScalarF32AVX2(a, y unsafe.Pointer, n int, alpha, beta float32)
SCALAR2(·mulScalarF32AVX2, VORPS, Y0)

// func mulAddScalarF32AVX2(a, y unsafe.Pointer, n int, alpha, beta float32)
SCALAR2(·mulAddScalarF32AVX2, VADDPS, Y2)

// func addScaledF32AVX2(a, y unsafe.Pointer, n int, alpha, beta float32)
SCALAR2(·addScaledF32AVX2, VADDPS, (DI))
