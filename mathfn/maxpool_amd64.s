//go:build amd64 && !purego

#include "textflag.h"

// func colMaxAVX2(dst, x unsafe.Pointer, n, rows, ld int)
// dst[i] = the largest of x[r*ld + i] over rows r above -MaxFloat32
// (-MaxFloat32 if none), for n values, rows >= 1: the accumulator starts
// at -MaxFloat32 and takes each value only where it is larger: VMAXPS
// with the value as its first source and the accumulator as its second
// returns the second unless the first is larger, so a NaN never enters.
TEXT ·colMaxAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ rows+24(FP), DX
	MOVQ ld+32(FP), R8
	SHLQ $2, R8
	MOVL $0xff7fffff, AX // -MaxFloat32
	MOVL AX, X15
	VBROADCASTSS X15, Y15
	MOVQ CX, R9 // n
vec:
	CMPQ CX, $8
	JLT last
	VMOVAPS Y15, Y0
	MOVQ SI, AX
	MOVQ DX, BX
vrows:
	VMOVUPS (AX), Y1
	VMAXPS Y0, Y1, Y0
	ADDQ R8, AX
	DECQ BX
	JNZ vrows
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP vec
last:
	// Rows of 8 values or more end with a vector that overlaps the one
	// before (the same maxima written again): no values one by one.
	TESTQ CX, CX
	JEQ done
	CMPQ R9, $8
	JLT tail
	MOVQ $8, AX
	SUBQ CX, AX
	SHLQ $2, AX
	SUBQ AX, SI
	SUBQ AX, DI
	MOVQ $8, CX
	MOVQ $8, R9 // once: the next pass ends the row
	JMP vec
tail:
	TESTQ CX, CX
	JEQ done
	VMOVAPS X15, X0
	MOVQ SI, AX
	MOVQ DX, BX
srows:
	VMOVSS (AX), X1
	VMAXSS X0, X1, X0
	ADDQ R8, AX
	DECQ BX
	JNZ srows
	VMOVSS X0, (DI)
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP tail
done:
	VZEROUPPER
	RET

// func slideMaxAVX2(dst, src unsafe.Pointer, n, k int)
// dst[i] = the largest of src[i : i+k] for n outputs, k >= 1; src holds no
// NaN, so the order of the maxima does not matter.
TEXT ·slideMaxAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ k+24(FP), DX
	DECQ DX
	MOVQ CX, R9 // n
vec:
	CMPQ CX, $8
	JLT last
	VMOVUPS (SI), Y0
	MOVQ SI, AX
	MOVQ DX, BX
vtaps:
	TESTQ BX, BX
	JEQ vstore
	ADDQ $4, AX
	VMAXPS (AX), Y0, Y0
	DECQ BX
	JMP vtaps
vstore:
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP vec
last:
	// As colMaxAVX2: an overlapping last vector where n >= 8.
	TESTQ CX, CX
	JEQ done
	CMPQ R9, $8
	JLT tail
	MOVQ $8, AX
	SUBQ CX, AX
	SHLQ $2, AX
	SUBQ AX, SI
	SUBQ AX, DI
	MOVQ $8, CX
	MOVQ $8, R9
	JMP vec
tail:
	TESTQ CX, CX
	JEQ done
	VMOVSS (SI), X0
	MOVQ SI, AX
	MOVQ DX, BX
staps:
	TESTQ BX, BX
	JEQ sstore
	ADDQ $4, AX
	VMAXSS (AX), X0, X0
	DECQ BX
	JMP staps
sstore:
	VMOVSS X0, (DI)
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP tail
done:
	VZEROUPPER
	RET
