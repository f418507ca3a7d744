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

// The AVX-512 kernel of a stride of 2: sixteen outputs at a time, the
// last vector of a row under a mask (masked stores write none of the
// lanes they leave out).

// func slideMaxS2AVX512(dst, src unsafe.Pointer, n, k int)
// dst[i] = the largest of src[2i : 2i+k] for n outputs, k >= 1, src
// without NaNs: for each tap the 32 values from the block's start plus
// the tap, their even places gathered into one vector (VPERMT2PS). It
// reads 32*ceil(n/16) + k - 1 values of src, past what the outputs need
// (slideMaxS2Vector's caller leaves room), into lanes it does not store.
TEXT ·slideMaxS2AVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ k+24(FP), DX
	DECQ DX
	VMOVDQU32 evenLanes<>(SB), Z7
	MOVL $0xffff, AX
	KMOVW AX, K1
s2_vec:
	TESTQ CX, CX
	JEQ s2_done
	CMPQ CX, $16
	JGE s2_full
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	MOVQ $16, CX
s2_full:
	VMOVUPS (SI), Z0
	VPERMT2PS 64(SI), Z7, Z0
	MOVQ SI, AX
	MOVQ DX, BX
s2_taps:
	TESTQ BX, BX
	JEQ s2_store
	ADDQ $4, AX
	VMOVUPS (AX), Z1
	VPERMT2PS 64(AX), Z7, Z1
	VMAXPS Z1, Z0, Z0
	DECQ BX
	JMP s2_taps
s2_store:
	VMOVUPS Z0, K1, (DI)
	ADDQ $128, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP s2_vec
s2_done:
	VZEROUPPER
	RET

// evenLanes indexes the even places of two vectors: 0, 2, ..., 30.
DATA evenLanes<>+0(SB)/4, $0
DATA evenLanes<>+4(SB)/4, $2
DATA evenLanes<>+8(SB)/4, $4
DATA evenLanes<>+12(SB)/4, $6
DATA evenLanes<>+16(SB)/4, $8
DATA evenLanes<>+20(SB)/4, $10
DATA evenLanes<>+24(SB)/4, $12
DATA evenLanes<>+28(SB)/4, $14
DATA evenLanes<>+32(SB)/4, $16
DATA evenLanes<>+36(SB)/4, $18
DATA evenLanes<>+40(SB)/4, $20
DATA evenLanes<>+44(SB)/4, $22
DATA evenLanes<>+48(SB)/4, $24
DATA evenLanes<>+52(SB)/4, $26
DATA evenLanes<>+56(SB)/4, $28
DATA evenLanes<>+60(SB)/4, $30
GLOBL evenLanes<>(SB), RODATA|NOPTR, $64
