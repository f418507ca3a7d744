//go:build amd64 && !purego

#include "textflag.h"

// func maxPoolRunAVX512(plane *int32, offsets *int32, n int, starts *[16]int32, mask uint16, y, idx *float32) (rare uint16)
//
// Max pooling of up to sixteen windows wholly inside a float32 plane, one
// per lane set in mask, whose outputs are consecutive: window j's
// elements are plane[starts[j]+offsets[t]], t = 0..n-1 in Caffe's
// (row-major) order. Values are compared by orderKey (sign-magnitude
// bits made two's complement) and a later element wins only when its key
// is larger, so the first of equal maxima is kept. Each lane writes its
// value to y[j] and its position to idx[j] (as a float); the lanes keys
// cannot decide (no key above that of -FLT_MAX, or a NaN above +Inf) are
// returned in rare, for the caller to redo.
TEXT ·maxPoolRunAVX512(SB), NOSPLIT, $0-58
	MOVQ plane+0(FP), AX
	MOVQ offsets+8(FP), BX
	MOVQ n+16(FP), CX
	MOVQ starts+24(FP), DX
	MOVWLZX mask+32(FP), DI
	MOVQ y+40(FP), R9
	MOVQ idx+48(FP), R10
	VMOVDQU32 (DX), Z0              // window starts
	MOVL $0x80800001, R8            // orderKey(-FLT_MAX)
	VPBROADCASTD R8, Z1
	VMOVDQA32 Z1, Z2                // best keys
	VPTERNLOGD $0xff, Z3, Z3, Z3    // best positions: -1
	VPXORD Z9, Z9, Z9               // best values
	MOVL $0x7fffffff, R11
	VPBROADCASTD R11, Z4            // magnitude mask
	KMOVW DI, K3

maxrun_loop:
	TESTQ CX, CX
	JEQ maxrun_done
	VPBROADCASTD (BX), Z5
	VPADDD Z5, Z0, Z5               // positions
	KMOVW K3, K1
	VPXORD Z8, Z8, Z8
	VPGATHERDD (AX)(Z5*4), K1, Z8   // values' bits
	VPSRAD $31, Z8, Z7
	VPANDD Z4, Z8, Z6
	VPXORD Z7, Z6, Z6
	VPSUBD Z7, Z6, Z6               // keys
	VPCMPGTD Z2, Z6, K2             // key > best
	VPMAXSD Z6, Z2, Z2
	VMOVDQA32 Z5, K2, Z3
	VMOVDQA32 Z8, K2, Z9
	ADDQ $4, BX
	DECQ CX
	JMP maxrun_loop

maxrun_done:
	MOVL $0x7f800000, R11           // orderKey(+Inf)
	VPBROADCASTD R11, Z4
	VPCMPGTD Z4, Z2, K4             // a NaN is the largest
	VPCMPEQD Z1, Z2, K5             // nothing above -FLT_MAX
	KORW K4, K5, K4
	KANDW K3, K4, K4
	VCVTDQ2PS Z3, Z3
	VMOVDQU32 Z9, K3, (R9)
	VMOVUPS Z3, K3, (R10)
	KMOVW K4, AX
	MOVW AX, rare+56(FP)
	VZEROUPPER
	RET

// func maxPoolRowAVX512(plane *int32, offsets *int32, n int, start int, mask uint16, y, idx *float32) (rare uint16)
//
// maxPoolRunAVX512 for windows one position apart (starts[j] = start + j,
// a stride of 1 along a row): each element of the sixteen windows is one
// vector load at start + offsets[t] instead of a gather (Zen 4 gathers a
// lane at a time). The lanes off mask load nothing (masked loads do not
// fault) and are neither stored nor returned.
TEXT ·maxPoolRowAVX512(SB), NOSPLIT, $0-58
	MOVQ plane+0(FP), AX
	MOVQ offsets+8(FP), BX
	MOVQ n+16(FP), CX
	MOVQ start+24(FP), DX
	MOVWLZX mask+32(FP), DI
	MOVQ y+40(FP), R9
	MOVQ idx+48(FP), R10
	VPBROADCASTD DX, Z0
	VPADDD maxrowIota<>(SB), Z0, Z0 // window starts
	LEAQ (AX)(DX*4), AX             // the first window's start
	MOVL $0x80800001, R8            // orderKey(-FLT_MAX)
	VPBROADCASTD R8, Z1
	VMOVDQA32 Z1, Z2                // best keys
	VPTERNLOGD $0xff, Z3, Z3, Z3    // best positions: -1
	VPXORD Z9, Z9, Z9               // best values
	MOVL $0x7fffffff, R11
	VPBROADCASTD R11, Z4            // magnitude mask
	KMOVW DI, K3

maxrow_loop:
	TESTQ CX, CX
	JEQ maxrow_done
	MOVLQSX (BX), R12
	VPBROADCASTD R12, Z5
	VPADDD Z5, Z0, Z5               // positions
	KMOVW K3, K1
	VPXORD Z8, Z8, Z8
	VMOVDQU32 (AX)(R12*4), K1, Z8   // values' bits
	VPSRAD $31, Z8, Z7
	VPANDD Z4, Z8, Z6
	VPXORD Z7, Z6, Z6
	VPSUBD Z7, Z6, Z6               // keys
	VPCMPGTD Z2, Z6, K2             // key > best
	VPMAXSD Z6, Z2, Z2
	VMOVDQA32 Z5, K2, Z3
	VMOVDQA32 Z8, K2, Z9
	ADDQ $4, BX
	DECQ CX
	JMP maxrow_loop

maxrow_done:
	MOVL $0x7f800000, R11           // orderKey(+Inf)
	VPBROADCASTD R11, Z4
	VPCMPGTD Z4, Z2, K4             // a NaN is the largest
	VPCMPEQD Z1, Z2, K5             // nothing above -FLT_MAX
	KORW K4, K5, K4
	KANDW K3, K4, K4
	VCVTDQ2PS Z3, Z3
	VMOVDQU32 Z9, K3, (R9)
	VMOVUPS Z3, K3, (R10)
	KMOVW K4, AX
	MOVW AX, rare+56(FP)
	VZEROUPPER
	RET

// func maxPoolRow2AVX512(plane *int32, offsets *int32, n int, start int, mask uint16, y, idx *float32) (rare uint16)
//
// maxPoolRowAVX512 for windows two positions apart (starts[j] = start +
// 2j, a stride of 2 along a row): each element of the sixteen windows is
// two vector loads of the 32 values from start + offsets[t] and their
// even lanes picked out (VPERMT2D), instead of a gather. The loads are
// masked to the even lanes of the windows in mask, so nothing past the
// last window's element is read.
TEXT ·maxPoolRow2AVX512(SB), NOSPLIT, $0-58
	MOVQ plane+0(FP), AX
	MOVQ offsets+8(FP), BX
	MOVQ n+16(FP), CX
	MOVQ start+24(FP), DX
	MOVWLZX mask+32(FP), DI
	MOVQ y+40(FP), R9
	MOVQ idx+48(FP), R10
	VMOVDQU32 maxrowEven<>(SB), Z11 // 0, 2, ..., 30: positions and the even lanes
	VPBROADCASTD DX, Z0
	VPADDD Z11, Z0, Z0              // window starts
	LEAQ (AX)(DX*4), AX             // the first window's start
	MOVL $0x5555, R13
	MOVL DI, R14
	ANDL $0xff, R14
	PDEPL R13, R14, R14             // the even lanes of windows 0-7
	KMOVW R14, K6
	MOVL DI, R14
	SHRL $8, R14
	PDEPL R13, R14, R14             // of windows 8-15
	KMOVW R14, K7
	MOVL $0x80800001, R8            // orderKey(-FLT_MAX)
	VPBROADCASTD R8, Z1
	VMOVDQA32 Z1, Z2                // best keys
	VPTERNLOGD $0xff, Z3, Z3, Z3    // best positions: -1
	VPXORD Z9, Z9, Z9               // best values
	MOVL $0x7fffffff, R11
	VPBROADCASTD R11, Z4            // magnitude mask
	KMOVW DI, K3

maxrow2_loop:
	TESTQ CX, CX
	JEQ maxrow2_done
	MOVLQSX (BX), R12
	VPBROADCASTD R12, Z5
	VPADDD Z5, Z0, Z5               // positions
	KMOVW K6, K1
	KMOVW K7, K2
	VPXORD Z8, Z8, Z8
	VPXORD Z10, Z10, Z10
	VMOVDQU32 (AX)(R12*4), K1, Z8   // values 0-15 from the window start
	VMOVDQU32 64(AX)(R12*4), K2, Z10 // values 16-31
	VPERMT2D Z10, Z11, Z8           // the even ones: values' bits
	VPSRAD $31, Z8, Z7
	VPANDD Z4, Z8, Z6
	VPXORD Z7, Z6, Z6
	VPSUBD Z7, Z6, Z6               // keys
	VPCMPGTD Z2, Z6, K2             // key > best
	VPMAXSD Z6, Z2, Z2
	VMOVDQA32 Z5, K2, Z3
	VMOVDQA32 Z8, K2, Z9
	ADDQ $4, BX
	DECQ CX
	JMP maxrow2_loop

maxrow2_done:
	MOVL $0x7f800000, R11           // orderKey(+Inf)
	VPBROADCASTD R11, Z4
	VPCMPGTD Z4, Z2, K4             // a NaN is the largest
	VPCMPEQD Z1, Z2, K5             // nothing above -FLT_MAX
	KORW K4, K5, K4
	KANDW K3, K4, K4
	VCVTDQ2PS Z3, Z3
	VMOVDQU32 Z9, K3, (R9)
	VMOVUPS Z3, K3, (R10)
	KMOVW K4, AX
	MOVW AX, rare+56(FP)
	VZEROUPPER
	RET

DATA maxrowEven<>+0(SB)/4, $0
DATA maxrowEven<>+4(SB)/4, $2
DATA maxrowEven<>+8(SB)/4, $4
DATA maxrowEven<>+12(SB)/4, $6
DATA maxrowEven<>+16(SB)/4, $8
DATA maxrowEven<>+20(SB)/4, $10
DATA maxrowEven<>+24(SB)/4, $12
DATA maxrowEven<>+28(SB)/4, $14
DATA maxrowEven<>+32(SB)/4, $16
DATA maxrowEven<>+36(SB)/4, $18
DATA maxrowEven<>+40(SB)/4, $20
DATA maxrowEven<>+44(SB)/4, $22
DATA maxrowEven<>+48(SB)/4, $24
DATA maxrowEven<>+52(SB)/4, $26
DATA maxrowEven<>+56(SB)/4, $28
DATA maxrowEven<>+60(SB)/4, $30
GLOBL maxrowEven<>(SB), RODATA|NOPTR, $64

DATA maxrowIota<>+0(SB)/4, $0
DATA maxrowIota<>+4(SB)/4, $1
DATA maxrowIota<>+8(SB)/4, $2
DATA maxrowIota<>+12(SB)/4, $3
DATA maxrowIota<>+16(SB)/4, $4
DATA maxrowIota<>+20(SB)/4, $5
DATA maxrowIota<>+24(SB)/4, $6
DATA maxrowIota<>+28(SB)/4, $7
DATA maxrowIota<>+32(SB)/4, $8
DATA maxrowIota<>+36(SB)/4, $9
DATA maxrowIota<>+40(SB)/4, $10
DATA maxrowIota<>+44(SB)/4, $11
DATA maxrowIota<>+48(SB)/4, $12
DATA maxrowIota<>+52(SB)/4, $13
DATA maxrowIota<>+56(SB)/4, $14
DATA maxrowIota<>+60(SB)/4, $15
GLOBL maxrowIota<>(SB), RODATA|NOPTR, $64
