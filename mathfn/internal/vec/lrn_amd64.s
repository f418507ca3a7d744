//go:build amd64 && !purego

#include "textflag.h"

// LRN's scale and output in float32 for an inference pass (LRNScalePrefix).

// func lrnScaleF32AVX512(x, sum, y unsafe.Pointer, n int, alpha, k float32, form int)
//
// y[i] = x[i] / d for n (a multiple of 16) float32 values, s = k +
// alpha*sum[i] (the product rounded, then the sum) and d by form: 0
// (beta 0.75) r*sqrt(r) with r = sqrt(s), 1 (0.5) sqrt(s), 2 (1) s.
TEXT ·lrnScaleF32AVX512(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ sum+8(FP), BX
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), CX
	VBROADCASTSS alpha+32(FP), Z6
	VBROADCASTSS k+36(FP), Z7
	MOVQ form+40(FP), DX
	CMPQ DX, $1
	JEQ half
	JGT one
quarters:
	VMULPS (BX), Z6, Z0
	VADDPS Z7, Z0, Z0
	VSQRTPS Z0, Z1
	VSQRTPS Z1, Z2
	VMULPS Z2, Z1, Z3
	VMOVUPS (SI), Z4
	VDIVPS Z3, Z4, Z5
	VMOVUPS Z5, (DI)
	ADDQ $64, SI
	ADDQ $64, BX
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ quarters
	VZEROUPPER
	RET
half:
	VMULPS (BX), Z6, Z0
	VADDPS Z7, Z0, Z0
	VSQRTPS Z0, Z1
	VMOVUPS (SI), Z4
	VDIVPS Z1, Z4, Z5
	VMOVUPS Z5, (DI)
	ADDQ $64, SI
	ADDQ $64, BX
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ half
	VZEROUPPER
	RET
one:
	VMULPS (BX), Z6, Z0
	VADDPS Z7, Z0, Z0
	VMOVUPS (SI), Z4
	VDIVPS Z0, Z4, Z5
	VMOVUPS Z5, (DI)
	ADDQ $64, SI
	ADDQ $64, BX
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ one
	VZEROUPPER
	RET

// func lrnScaleF32AVX2(x, sum, y unsafe.Pointer, n int, alpha, k float32, form int)
//
// y[i] = x[i] / d for n (a multiple of 8) float32 values, s = k +
// alpha*sum[i] (the product rounded, then the sum) and d by form: 0
// (beta 0.75) r*sqrt(r) with r = sqrt(s), 1 (0.5) sqrt(s), 2 (1) s.
TEXT ·lrnScaleF32AVX2(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ sum+8(FP), BX
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), CX
	VBROADCASTSS alpha+32(FP), Y6
	VBROADCASTSS k+36(FP), Y7
	MOVQ form+40(FP), DX
	CMPQ DX, $1
	JEQ half2
	JGT one2
quarters2:
	VMULPS (BX), Y6, Y0
	VADDPS Y7, Y0, Y0
	VSQRTPS Y0, Y1
	VSQRTPS Y1, Y2
	VMULPS Y2, Y1, Y3
	VMOVUPS (SI), Y4
	VDIVPS Y3, Y4, Y5
	VMOVUPS Y5, (DI)
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ quarters2
	VZEROUPPER
	RET
half2:
	VMULPS (BX), Y6, Y0
	VADDPS Y7, Y0, Y0
	VSQRTPS Y0, Y1
	VMOVUPS (SI), Y4
	VDIVPS Y1, Y4, Y5
	VMOVUPS Y5, (DI)
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ half2
	VZEROUPPER
	RET
one2:
	VMULPS (BX), Y6, Y0
	VADDPS Y7, Y0, Y0
	VMOVUPS (SI), Y4
	VDIVPS Y0, Y4, Y5
	VMOVUPS Y5, (DI)
	ADDQ $32, SI
	ADDQ $32, BX
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ one2
	VZEROUPPER
	RET
