//go:build amd64 && !purego

#include "textflag.h"

// The row kernels of rows_amd64.go: rows rows of full*lanes elements plus
// the lanes of mask, row strides in bytes. Masked loads do not fault on
// the lanes they leave out.

// func copyRowsAVX512(dst, src unsafe.Pointer, full, rows, dstStride, srcStride int, mask uint16)
// Copies 32-bit lanes (float64 rows go as twice as many).
TEXT ·copyRowsAVX512(SB), NOSPLIT, $0-50
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+24(FP), DX
	MOVQ dstStride+32(FP), R8
	MOVQ srcStride+40(FP), R9
	KMOVW mask+48(FP), K1

copy_row:
	TESTQ DX, DX
	JEQ copy_done
	MOVQ DI, R12
	MOVQ SI, R13
	MOVQ full+16(FP), R14

copy_col:
	TESTQ R14, R14
	JEQ copy_tail
	VMOVUPS (R13), Z0
	VMOVUPS Z0, (R12)
	ADDQ $64, R12
	ADDQ $64, R13
	DECQ R14
	JMP copy_col

copy_tail:
	VMOVUPS.Z (R13), K1, Z0
	VMOVUPS Z0, K1, (R12)
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JMP copy_row

copy_done:
	VZEROUPPER
	RET

// func addRowsAVX512F32(dst, src unsafe.Pointer, full, rows, dstStride, srcStride int, mask uint16)
// dst += src, float32.
TEXT ·addRowsAVX512F32(SB), NOSPLIT, $0-50
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+24(FP), DX
	MOVQ dstStride+32(FP), R8
	MOVQ srcStride+40(FP), R9
	KMOVW mask+48(FP), K1

add32_row:
	TESTQ DX, DX
	JEQ add32_done
	MOVQ DI, R12
	MOVQ SI, R13
	MOVQ full+16(FP), R14

add32_col:
	TESTQ R14, R14
	JEQ add32_tail
	VMOVUPS (R12), Z0
	VADDPS (R13), Z0, Z0
	VMOVUPS Z0, (R12)
	ADDQ $64, R12
	ADDQ $64, R13
	DECQ R14
	JMP add32_col

add32_tail:
	VMOVUPS.Z (R12), K1, Z0
	VMOVUPS.Z (R13), K1, Z1
	VADDPS Z1, Z0, Z0
	VMOVUPS Z0, K1, (R12)
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JMP add32_row

add32_done:
	VZEROUPPER
	RET

// func addRowsAVX512F64(dst, src unsafe.Pointer, full, rows, dstStride, srcStride int, mask uint16)
// dst += src, float64 (8 lanes a vector; mask's low 8 bits).
TEXT ·addRowsAVX512F64(SB), NOSPLIT, $0-50
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+24(FP), DX
	MOVQ dstStride+32(FP), R8
	MOVQ srcStride+40(FP), R9
	KMOVW mask+48(FP), K1

add64_row:
	TESTQ DX, DX
	JEQ add64_done
	MOVQ DI, R12
	MOVQ SI, R13
	MOVQ full+16(FP), R14

add64_col:
	TESTQ R14, R14
	JEQ add64_tail
	VMOVUPD (R12), Z0
	VADDPD (R13), Z0, Z0
	VMOVUPD Z0, (R12)
	ADDQ $64, R12
	ADDQ $64, R13
	DECQ R14
	JMP add64_col

add64_tail:
	VMOVUPD.Z (R12), K1, Z0
	VMOVUPD.Z (R13), K1, Z1
	VADDPD Z1, Z0, Z0
	VMOVUPD Z0, K1, (R12)
	ADDQ R8, DI
	ADDQ R9, SI
	DECQ DX
	JMP add64_row

add64_done:
	VZEROUPPER
	RET

// func copyRowsAVX2(dst, src unsafe.Pointer, bytes, rows, dstStride, srcStride int)
// Copies rows rows of bytes bytes (a multiple of 4), the rows dstStride and
// srcStride bytes apart: 64 bytes at a time, then 32, 16 and 4.
TEXT ·copyRowsAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ bytes+16(FP), DX
	MOVQ rows+24(FP), R9
	MOVQ dstStride+32(FP), R10
	MOVQ srcStride+40(FP), R11
	TESTQ R9, R9
	JEQ avx2done
avx2row:
	MOVQ DI, AX
	MOVQ SI, BX
	MOVQ DX, CX
avx2c64:
	CMPQ CX, $64
	JLT avx2c32
	VMOVUPS (BX), Y0
	VMOVUPS 32(BX), Y1
	VMOVUPS Y0, (AX)
	VMOVUPS Y1, 32(AX)
	ADDQ $64, AX
	ADDQ $64, BX
	SUBQ $64, CX
	JMP avx2c64
avx2c32:
	CMPQ CX, $32
	JLT avx2c16
	VMOVUPS (BX), Y0
	VMOVUPS Y0, (AX)
	ADDQ $32, AX
	ADDQ $32, BX
	SUBQ $32, CX
avx2c16:
	CMPQ CX, $16
	JLT avx2c4
	VMOVUPS (BX), X0
	VMOVUPS X0, (AX)
	ADDQ $16, AX
	ADDQ $16, BX
	SUBQ $16, CX
avx2c4:
	CMPQ CX, $4
	JLT avx2next
	MOVL (BX), R8
	MOVL R8, (AX)
	ADDQ $4, AX
	ADDQ $4, BX
	SUBQ $4, CX
	JMP avx2c4
avx2next:
	ADDQ R10, DI
	ADDQ R11, SI
	DECQ R9
	JNZ avx2row
avx2done:
	VZEROUPPER
	RET
