//go:build amd64 && !purego

#include "textflag.h"

// func negPowF32AVX512(src, dst unsafe.Pointer, n, form int)
//
// dst[i] = s^-beta for n (a multiple of 8) float32 values s of src, each
// widened to float64 and computed as negPow does, with correctly rounded
// square roots, products and quotients, then rounded to float32: form 0
// (beta 0.75) 1 / (r * sqrt(r)) with r = sqrt(s), form 1 (0.5)
// 1 / sqrt(s), form 2 (1) 1 / s.
TEXT ·negPowF32AVX512(SB), NOSPLIT, $0-32
	MOVQ src+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ form+24(FP), DX
	MOVQ $0x3ff0000000000000, AX // 1.0
	VPBROADCASTQ AX, Z7
	CMPQ DX, $1
	JEQ half
	JGT one
quarters:
	VCVTPS2PD (SI), Z0
	VSQRTPD Z0, Z1
	VSQRTPD Z1, Z2
	VMULPD Z2, Z1, Z3
	VDIVPD Z3, Z7, Z4
	VCVTPD2PS Z4, Y5
	VMOVUPS Y5, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ quarters
	VZEROUPPER
	RET
half:
	VCVTPS2PD (SI), Z0
	VSQRTPD Z0, Z1
	VDIVPD Z1, Z7, Z4
	VCVTPD2PS Z4, Y5
	VMOVUPS Y5, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ half
	VZEROUPPER
	RET
one:
	VCVTPS2PD (SI), Z0
	VDIVPD Z0, Z7, Z4
	VCVTPD2PS Z4, Y5
	VMOVUPS Y5, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ one
	VZEROUPPER
	RET

// func negPowF32AVX2(src, dst unsafe.Pointer, n, form int)
//
// negPowF32AVX512 with four float64 lanes: n a multiple of 4.
TEXT ·negPowF32AVX2(SB), NOSPLIT, $0-32
	MOVQ src+0(FP), SI
	MOVQ dst+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ form+24(FP), DX
	MOVQ $0x3ff0000000000000, AX // 1.0
	MOVQ AX, X7
	VBROADCASTSD X7, Y7
	CMPQ DX, $1
	JEQ half2
	JGT one2
quarters2:
	VCVTPS2PD (SI), Y0
	VSQRTPD Y0, Y1
	VSQRTPD Y1, Y2
	VMULPD Y2, Y1, Y3
	VDIVPD Y3, Y7, Y4
	VCVTPD2PSY Y4, X5
	VMOVUPS X5, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $4, CX
	JNZ quarters2
	VZEROUPPER
	RET
half2:
	VCVTPS2PD (SI), Y0
	VSQRTPD Y0, Y1
	VDIVPD Y1, Y7, Y4
	VCVTPD2PSY Y4, X5
	VMOVUPS X5, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $4, CX
	JNZ half2
	VZEROUPPER
	RET
one2:
	VCVTPS2PD (SI), Y0
	VDIVPD Y0, Y7, Y4
	VCVTPD2PSY Y4, X5
	VMOVUPS X5, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	SUBQ $4, CX
	JNZ one2
	VZEROUPPER
	RET
