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

// func copyOffsetsAVX512(dst, src unsafe.Pointer, full, dstStride int, offs unsafe.Pointer, rows int, mask uint16)
// float32 row r: full 16-lane vectors and a masked tail from src +
// offs[r]*4 bytes (offs int32, in elements) to dst + r*dstStride bytes.
TEXT ·copyOffsetsAVX512(SB), NOSPLIT, $0-50
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ dstStride+24(FP), R8
	MOVQ offs+32(FP), R10
	MOVQ rows+40(FP), DX
	KMOVW mask+48(FP), K1

offs_row:
	TESTQ DX, DX
	JEQ offs_done
	MOVLQSX (R10), R11
	LEAQ (SI)(R11*4), R13
	MOVQ DI, R12
	MOVQ full+16(FP), R14

offs_col:
	TESTQ R14, R14
	JEQ offs_tail
	VMOVUPS (R13), Z0
	VMOVUPS Z0, (R12)
	ADDQ $64, R12
	ADDQ $64, R13
	DECQ R14
	JMP offs_col

offs_tail:
	VMOVUPS.Z (R13), K1, Z0
	VMOVUPS Z0, K1, (R12)
	ADDQ R8, DI
	ADDQ $4, R10
	DECQ DX
	JMP offs_row

offs_done:
	VZEROUPPER
	RET
