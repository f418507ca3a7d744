//go:build amd64 && !purego

#include "textflag.h"

// func epilogueAVX2(c unsafe.Pointer, ldc, rows, cols int, bias unsafe.Pointer, biasStep int, relu int)
//
// For each of rows rows of c (ldc elements apart) and its first cols
// values: v = c + bias, then with relu set max(v, 0) as the Go epilogue
// computes it. VMAXPS with 0 as its first source returns the second, v,
// unless 0 > v: v for a positive v or a NaN (which stays NaN), 0 for a
// negative v or -Inf, and -0 for -0, which adding +0 turns into +0 (the Go
// loop's "not above 0 and not NaN: 0"); the addition leaves every other
// result as it is. bias advances biasStep bytes a row (0: one value for
// all rows).
TEXT ·epilogueAVX2(SB), NOSPLIT, $0-56
	MOVQ c+0(FP), DI
	MOVQ ldc+8(FP), R8
	SHLQ $2, R8
	MOVQ rows+16(FP), R9
	MOVQ cols+24(FP), R10
	MOVQ bias+32(FP), SI
	MOVQ biasStep+40(FP), R12
	MOVQ relu+48(FP), R11
	VXORPS Y0, Y0, Y0
	TESTQ R9, R9
	JEQ done

row:
	VBROADCASTSS (SI), Y1
	MOVQ DI, AX
	MOVQ R10, CX
	TESTQ R11, R11
	JEQ plain16

relu16:
	CMPQ CX, $16
	JLT relu8
	VADDPS (AX), Y1, Y2
	VADDPS 32(AX), Y1, Y3
	VMAXPS Y2, Y0, Y2
	VMAXPS Y3, Y0, Y3
	VADDPS Y0, Y2, Y2
	VADDPS Y0, Y3, Y3
	VMOVUPS Y2, (AX)
	VMOVUPS Y3, 32(AX)
	ADDQ $64, AX
	SUBQ $16, CX
	JMP relu16

relu8:
	CMPQ CX, $8
	JLT relu1
	VADDPS (AX), Y1, Y2
	VMAXPS Y2, Y0, Y2
	VADDPS Y0, Y2, Y2
	VMOVUPS Y2, (AX)
	ADDQ $32, AX
	SUBQ $8, CX

relu1:
	TESTQ CX, CX
	JEQ next
	VMOVSS (AX), X2
	VADDSS X1, X2, X2
	VMAXSS X2, X0, X2
	VADDSS X0, X2, X2
	VMOVSS X2, (AX)
	ADDQ $4, AX
	DECQ CX
	JMP relu1

plain16:
	CMPQ CX, $16
	JLT plain8
	VADDPS (AX), Y1, Y2
	VADDPS 32(AX), Y1, Y3
	VMOVUPS Y2, (AX)
	VMOVUPS Y3, 32(AX)
	ADDQ $64, AX
	SUBQ $16, CX
	JMP plain16

plain8:
	CMPQ CX, $8
	JLT plain1
	VADDPS (AX), Y1, Y2
	VMOVUPS Y2, (AX)
	ADDQ $32, AX
	SUBQ $8, CX

plain1:
	TESTQ CX, CX
	JEQ next
	VMOVSS (AX), X2
	VADDSS X1, X2, X2
	VMOVSS X2, (AX)
	ADDQ $4, AX
	DECQ CX
	JMP plain1

next:
	ADDQ R12, SI
	ADDQ R8, DI
	DECQ R9
	JNZ row

done:
	VZEROUPPER
	RET
