//go:build amd64 && !purego

#include "textflag.h"

// The AVX2 row kernels of rows_amd64.go, for CPUs without AVX-512. AVX2
// has no mask registers, and its masked stores (VMASKMOVPS) are slow on
// AMD cores, so the ends of rows are done without them: a copy ends with
// one more full vector that overlaps the previous one (rewriting the same
// values), a sum, which cannot add twice, with a half vector and single
// lanes. Strides are in bytes.

// func copyRowsAVX2(dst, src unsafe.Pointer, n, rows, dstStride, srcStride int)
// Copies rows rows of n 32-bit lanes (float64 rows go as twice as many).
TEXT ·copyRowsAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ rows+24(FP), DX
	MOVQ dstStride+32(FP), R8
	MOVQ srcStride+40(FP), R9
	TESTQ DX, DX
	JEQ copy_done
	TESTQ CX, CX
	JEQ copy_done
	// R10: the byte offset of the row's last vector of 8, 4 or 2 lanes.
	MOVQ CX, R10
	SHLQ $2, R10
	CMPQ CX, $8
	JLT copy_short
	SUBQ $32, R10

copy_wide_row:
	XORQ R11, R11

copy_wide_col:
	CMPQ R11, R10
	JGE copy_wide_last
	VMOVUPS (SI)(R11*1), Y0
	VMOVUPS Y0, (DI)(R11*1)
	ADDQ $32, R11
	JMP copy_wide_col

copy_wide_last:
	VMOVUPS (SI)(R10*1), Y0
	VMOVUPS Y0, (DI)(R10*1)
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JNE copy_wide_row
	VZEROUPPER

copy_done:
	RET

copy_short:
	CMPQ CX, $4
	JLT copy_tiny
	SUBQ $16, R10

copy_4_row:
	VMOVUPS (SI), X0
	VMOVUPS (SI)(R10*1), X1
	VMOVUPS X0, (DI)
	VMOVUPS X1, (DI)(R10*1)
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JNE copy_4_row
	RET

copy_tiny:
	CMPQ CX, $2
	JLT copy_1_row
	SUBQ $8, R10

copy_2_row:
	MOVQ (SI), AX
	MOVQ (SI)(R10*1), BX
	MOVQ AX, (DI)
	MOVQ BX, (DI)(R10*1)
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JNE copy_2_row
	RET

copy_1_row:
	MOVL (SI), AX
	MOVL AX, (DI)
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JNE copy_1_row
	RET

// func addRowsAVX2F32(dst, src unsafe.Pointer, n, rows, dstStride, srcStride int)
// dst += src over rows rows of n float32.
TEXT ·addRowsAVX2F32(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ rows+24(FP), DX
	MOVQ dstStride+32(FP), R8
	MOVQ srcStride+40(FP), R9
	TESTQ DX, DX
	JEQ add32_done

add32_row:
	MOVQ DI, R12
	MOVQ SI, R13
	MOVQ CX, R14

add32_8:
	CMPQ R14, $8
	JLT add32_4
	VMOVUPS (R12), Y0
	VADDPS (R13), Y0, Y0
	VMOVUPS Y0, (R12)
	ADDQ $32, R12
	ADDQ $32, R13
	SUBQ $8, R14
	JMP add32_8

add32_4:
	CMPQ R14, $4
	JLT add32_1
	VMOVUPS (R12), X0
	VADDPS (R13), X0, X0
	VMOVUPS X0, (R12)
	ADDQ $16, R12
	ADDQ $16, R13
	SUBQ $4, R14

add32_1:
	TESTQ R14, R14
	JEQ add32_next
	VMOVSS (R12), X0
	VADDSS (R13), X0, X0
	VMOVSS X0, (R12)
	ADDQ $4, R12
	ADDQ $4, R13
	DECQ R14
	JMP add32_1

add32_next:
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JNE add32_row
	VZEROUPPER

add32_done:
	RET

// func addRowsAVX2F64(dst, src unsafe.Pointer, n, rows, dstStride, srcStride int)
// dst += src over rows rows of n float64.
TEXT ·addRowsAVX2F64(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ rows+24(FP), DX
	MOVQ dstStride+32(FP), R8
	MOVQ srcStride+40(FP), R9
	TESTQ DX, DX
	JEQ add64_done

add64_row:
	MOVQ DI, R12
	MOVQ SI, R13
	MOVQ CX, R14

add64_4:
	CMPQ R14, $4
	JLT add64_2
	VMOVUPD (R12), Y0
	VADDPD (R13), Y0, Y0
	VMOVUPD Y0, (R12)
	ADDQ $32, R12
	ADDQ $32, R13
	SUBQ $4, R14
	JMP add64_4

add64_2:
	CMPQ R14, $2
	JLT add64_1
	VMOVUPD (R12), X0
	VADDPD (R13), X0, X0
	VMOVUPD X0, (R12)
	ADDQ $16, R12
	ADDQ $16, R13
	SUBQ $2, R14

add64_1:
	TESTQ R14, R14
	JEQ add64_next
	VMOVSD (R12), X0
	VADDSD (R13), X0, X0
	VMOVSD X0, (R12)

add64_next:
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JNE add64_row
	VZEROUPPER

add64_done:
	RET

// func copy2RowsAVX2F32(dst, src unsafe.Pointer, n, rows, dstStride, srcStride int)
// dst[r][i] = src[r][2*i] for rows rows of n float32 values, n and rows
// above 0. Eight values a round from two vectors of the source: a
// shuffle takes the even lanes of each 128-bit half, a permute of the
// 64-bit pairs puts them in order. The rounds stop while a vector would
// read past the row's last even element; single values end the row.
TEXT ·copy2RowsAVX2F32(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ rows+24(FP), DX
	MOVQ dstStride+32(FP), R8
	MOVQ srcStride+40(FP), R9

c2_row:
	XORQ AX, AX // i

c2_vec:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGE  c2_tail
	VMOVUPS (SI)(AX*8), Y0
	VMOVUPS 32(SI)(AX*8), Y1
	VSHUFPS $0x88, Y1, Y0, Y2
	VPERMPD $0xd8, Y2, Y2
	VMOVUPS Y2, (DI)(AX*4)
	MOVQ BX, AX
	JMP  c2_vec

c2_tail:
	CMPQ AX, CX
	JGE  c2_next
	MOVL (SI)(AX*8), BX
	MOVL BX, (DI)(AX*4)
	INCQ AX
	JMP  c2_tail

c2_next:
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JNZ  c2_row
	VZEROUPPER
	RET

// func copyStridedAVX2F32(dst, src unsafe.Pointer, n, rows, dstStride, srcStride, step int)
// dst[r][i] = src[r][step*i] for rows rows of n float32 values, n and
// rows above 0: eight values a round by a gather of the indices
// 0, step, ..., 7*step (the gather reads no other element), single values
// to end the row.
TEXT ·copyStridedAVX2F32(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ rows+24(FP), DX
	MOVQ dstStride+32(FP), R8
	MOVQ srcStride+40(FP), R9
	MOVQ step+48(FP), R10
	// Y4: the indices i*step; R11: the bytes of 8 steps.
	VMOVDQU iota8<>(SB), Y4
	VMOVD R10, X5
	VPBROADCASTD X5, Y5
	VPMULLD Y5, Y4, Y4
	MOVQ R10, R11
	SHLQ $5, R11
	MOVQ R10, R12
	SHLQ $2, R12 // bytes of one step

cs_row:
	MOVQ SI, R13 // the source of output i
	XORQ AX, AX  // i

cs_vec:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT  cs_tail
	VPCMPEQD Y6, Y6, Y6
	VPXOR Y0, Y0, Y0
	VGATHERDPS Y6, (R13)(Y4*4), Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ R11, R13
	MOVQ BX, AX
	JMP  cs_vec

cs_tail:
	CMPQ AX, CX
	JGE  cs_next
	MOVL (R13), BX
	MOVL BX, (DI)(AX*4)
	ADDQ R12, R13
	INCQ AX
	JMP  cs_tail

cs_next:
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JNZ  cs_row
	VZEROUPPER
	RET

DATA iota8<>+0(SB)/4, $0
DATA iota8<>+4(SB)/4, $1
DATA iota8<>+8(SB)/4, $2
DATA iota8<>+12(SB)/4, $3
DATA iota8<>+16(SB)/4, $4
DATA iota8<>+20(SB)/4, $5
DATA iota8<>+24(SB)/4, $6
DATA iota8<>+28(SB)/4, $7
GLOBL iota8<>(SB), RODATA|NOPTR, $32

// func copyOffsetsAVX2(dst, src unsafe.Pointer, n, dstStride int, offs unsafe.Pointer, rows int)
// float32 row r, n >= 4 lanes: src + offs[r]*4 bytes (offs int32, in
// elements) to dst + r*dstStride bytes, by vectors of 8 (4 for n < 8),
// the last one overlapping the one before.
TEXT ·copyOffsetsAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ dstStride+24(FP), R8
	MOVQ offs+32(FP), R9
	MOVQ rows+40(FP), DX
	TESTQ DX, DX
	JEQ offs_done
	// R10: the byte offset of the row's last vector.
	MOVQ CX, R10
	SHLQ $2, R10
	CMPQ CX, $8
	JLT offs_short
	SUBQ $32, R10

offs_wide_row:
	MOVLQSX (R9), R12
	LEAQ (SI)(R12*4), R13
	XORQ R11, R11

offs_wide_col:
	CMPQ R11, R10
	JGE offs_wide_last
	VMOVUPS (R13)(R11*1), Y0
	VMOVUPS Y0, (DI)(R11*1)
	ADDQ $32, R11
	JMP offs_wide_col

offs_wide_last:
	VMOVUPS (R13)(R10*1), Y0
	VMOVUPS Y0, (DI)(R10*1)
	ADDQ R8, DI
	ADDQ $4, R9
	DECQ DX
	JNE offs_wide_row
	VZEROUPPER

offs_done:
	RET

offs_short:
	SUBQ $16, R10

offs_4_row:
	MOVLQSX (R9), R12
	LEAQ (SI)(R12*4), R13
	VMOVUPS (R13), X0
	VMOVUPS (R13)(R10*1), X1
	VMOVUPS X0, (DI)
	VMOVUPS X1, (DI)(R10*1)
	ADDQ R8, DI
	ADDQ $4, R9
	DECQ DX
	JNE offs_4_row
	RET
