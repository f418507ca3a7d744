//go:build amd64 && !purego

#include "textflag.h"

// BatchNorm's element-wise passes on the host, eight float32 at a time
// over n values (a multiple of 8): each value through the same IEEE
// operations, in the same order and each rounded on its own (no fused
// multiply-add), as the Go loops of layer/normalization, so the results
// are the same bit for bit.

// func bnSquaresF32AVX2(x, sq unsafe.Pointer, n int, m float32)
// c = x - m; sq = c*c.
TEXT ·bnSquaresF32AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ sq+8(FP), DI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Y0

squares_loop:
	VMOVUPS (SI), Y1
	VSUBPS  Y0, Y1, Y1
	VMULPS  Y1, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     squares_loop
	VZEROUPPER
	RET

// func bnNormalizeF32AVX2(x, y, xn unsafe.Pointer, n int, m, s float32)
// q = (x - m) / s (a true division, as the Go loop's); y = q; xn = q.
TEXT ·bnNormalizeF32AVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ xn+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS m+32(FP), Y0
	VBROADCASTSS s+36(FP), Y2

normalize_loop:
	VMOVUPS (SI), Y1
	VSUBPS  Y0, Y1, Y1
	VDIVPS  Y2, Y1, Y1
	VMOVUPS Y1, (DI)
	VMOVUPS Y1, (DX)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, DX
	SUBQ    $8, CX
	JNZ     normalize_loop
	VZEROUPPER
	RET

// func bnDxF32AVX2(y, dy, dx unsafe.Pointer, n int, s1, s2, scale, std float32)
// dx = ((y*s1 + s2)*scale + dy) / std, every operation rounded.
TEXT ·bnDxF32AVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), SI
	MOVQ dy+8(FP), BX
	MOVQ dx+16(FP), DI
	MOVQ n+24(FP), CX
	VBROADCASTSS s1+32(FP), Y0
	VBROADCASTSS s2+36(FP), Y1
	VBROADCASTSS scale+40(FP), Y2
	VBROADCASTSS std+44(FP), Y3

dx_loop:
	VMOVUPS (SI), Y4
	VMULPS  Y0, Y4, Y4
	VADDPS  Y1, Y4, Y4
	VMULPS  Y2, Y4, Y4
	VADDPS  (BX), Y4, Y4
	VDIVPS  Y3, Y4, Y4
	VMOVUPS Y4, (DI)
	ADDQ    $32, SI
	ADDQ    $32, BX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     dx_loop
	VZEROUPPER
	RET
