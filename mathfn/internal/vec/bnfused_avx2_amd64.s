//go:build amd64 && !purego

#include "textflag.h"

// The fused BatchNorm chain's row passes on the host (BatchNorm, then its
// Scale and zero-slope ReLU, layer/normalization/batchnorm_fuse_cpu.go),
// eight float32 at a time over n values (a multiple of 8). The element-wise
// results go through the IEEE operations of the unfused layers' passes, in
// their order and each rounded on its own (no fused multiply-add), so they
// are the same bit for bit; the sums are taken in vector lanes, another
// order than the unfused passes' dot products (rounding).

// func bnSumF32AVX2(x unsafe.Pointer, n int) float32
// The sum of x: four accumulators over 32 values a round (an add's
// latency would otherwise bound a row already in the L2 cache).
TEXT ·bnSumF32AVX2(SB), NOSPLIT, $0-20
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

sum_loop4:
	CMPQ   CX, $32
	JLT    sum_loop1
	VADDPS (SI), Y0, Y0
	VADDPS 32(SI), Y1, Y1
	VADDPS 64(SI), Y2, Y2
	VADDPS 96(SI), Y3, Y3
	ADDQ   $128, SI
	SUBQ   $32, CX
	JMP    sum_loop4

sum_loop1:
	TESTQ  CX, CX
	JEQ    sum_done
	VADDPS (SI), Y0, Y0
	ADDQ   $32, SI
	SUBQ   $8, CX
	JMP    sum_loop1

sum_done:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	MOVSS        X0, ret+16(FP)
	VZEROUPPER
	RET

// func bnSqDevSumF32AVX2(x unsafe.Pointer, n int, m float32) float32
// The sum of (x - m)^2, the difference rounded, then its square.
TEXT ·bnSqDevSumF32AVX2(SB), NOSPLIT, $0-28
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Y4
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1

sq_loop2:
	CMPQ    CX, $16
	JLT     sq_loop1
	VMOVUPS (SI), Y5
	VMOVUPS 32(SI), Y6
	VSUBPS  Y4, Y5, Y5
	VSUBPS  Y4, Y6, Y6
	VMULPS  Y5, Y5, Y5
	VMULPS  Y6, Y6, Y6
	VADDPS  Y5, Y0, Y0
	VADDPS  Y6, Y1, Y1
	ADDQ    $64, SI
	SUBQ    $16, CX
	JMP     sq_loop2

sq_loop1:
	TESTQ   CX, CX
	JEQ     sq_done
	VMOVUPS (SI), Y5
	VSUBPS  Y4, Y5, Y5
	VMULPS  Y5, Y5, Y5
	VADDPS  Y5, Y0, Y0
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     sq_loop1

sq_done:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	MOVSS        X0, ret+24(FP)
	VZEROUPPER
	RET

// func bnNormScaleF32AVX2(x, y, xn unsafe.Pointer, n int, m, s, gamma, beta float32, relu int)
// xn = (x - m) / s (a true division); t = xn*gamma + beta; y = t, or with
// relu Caffe's max(t, 0) + 0*min(t, 0) (+0 for a finite negative t, NaN
// for -Inf, t otherwise: -0 and a NaN kept). MAXPS and MINPS return their
// second operand where either is a NaN or both are zeros, as std::max(t,
// 0) and std::min(t, 0) return t.
TEXT ·bnNormScaleF32AVX2(SB), NOSPLIT, $0-56
	MOVQ         x+0(FP), SI
	MOVQ         y+8(FP), DI
	MOVQ         xn+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS m+32(FP), Y0
	VBROADCASTSS s+36(FP), Y1
	VBROADCASTSS gamma+40(FP), Y2
	VBROADCASTSS beta+44(FP), Y3
	VXORPS       Y4, Y4, Y4
	MOVQ         relu+48(FP), AX
	TESTQ        AX, AX
	JEQ          norm_loop

norm_relu_loop:
	VMOVUPS (SI), Y5
	VSUBPS  Y0, Y5, Y5
	VDIVPS  Y1, Y5, Y5
	VMOVUPS Y5, (DX)
	VMULPS  Y2, Y5, Y5
	VADDPS  Y3, Y5, Y5
	VMAXPS  Y5, Y4, Y6 // 0 > t ? 0 : t
	VMINPS  Y5, Y4, Y7 // 0 < t ? 0 : t
	VMULPS  Y4, Y7, Y7
	VADDPS  Y7, Y6, Y6
	VMOVUPS Y6, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, DX
	SUBQ    $8, CX
	JNZ     norm_relu_loop
	VZEROUPPER
	RET

norm_loop:
	VMOVUPS (SI), Y5
	VSUBPS  Y0, Y5, Y5
	VDIVPS  Y1, Y5, Y5
	VMOVUPS Y5, (DX)
	VMULPS  Y2, Y5, Y5
	VADDPS  Y3, Y5, Y5
	VMOVUPS Y5, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, DX
	SUBQ    $8, CX
	JNZ     norm_loop
	VZEROUPPER
	RET

// func bnBackRowF32AVX2(dy, xn unsafe.Pointer, n int, gamma, beta float32, relu int, sums unsafe.Pointer)
// dz = dy * f (with relu f = 1 where xn*gamma + beta > 0, each operation
// rounded as the forward pass computed y from xn, else 0, a NaN's 0
// included, as the ReLU's backward pass; else dz = dy); dy = dz*gamma;
// and the sums of dz, dz*xn, xn*dy and dy (the new dy) into sums[0:4].
TEXT ·bnBackRowF32AVX2(SB), NOSPLIT, $0-48
	MOVQ         dy+0(FP), DI
	MOVQ         xn+8(FP), DX
	MOVQ         n+16(FP), CX
	VBROADCASTSS gamma+24(FP), Y4
	VBROADCASTSS beta+28(FP), Y11
	MOVQ         relu+32(FP), AX
	MOVL         $0x3f800000, BX
	MOVL         BX, X5
	VBROADCASTSS X5, Y5 // 1.0
	VXORPS       Y6, Y6, Y6
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3

back_loop:
	VMOVUPS (DI), Y7
	VMOVUPS (DX), Y9
	TESTQ   AX, AX
	JEQ     back_nomask
	VMULPS  Y4, Y9, Y8
	VADDPS  Y11, Y8, Y8         // y before the ReLU
	VCMPPS  $0x11, Y8, Y6, Y8   // 0 < it, false for a NaN
	VANDPS  Y5, Y8, Y8
	VMULPS  Y7, Y8, Y7

back_nomask:
	VADDPS  Y7, Y0, Y0
	VMULPS  Y9, Y7, Y10
	VADDPS  Y10, Y1, Y1
	VMULPS  Y4, Y7, Y7
	VMOVUPS Y7, (DI)
	VMULPS  Y7, Y9, Y10
	VADDPS  Y10, Y2, Y2
	VADDPS  Y7, Y3, Y3
	ADDQ    $32, DI
	ADDQ    $32, DX
	SUBQ    $8, CX
	JNZ     back_loop

	MOVQ         sums+40(FP), DI
	VEXTRACTF128 $1, Y0, X8
	VADDPS       X8, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	MOVSS        X0, (DI)
	VEXTRACTF128 $1, Y1, X8
	VADDPS       X8, X1, X1
	VHADDPS      X1, X1, X1
	VHADDPS      X1, X1, X1
	MOVSS        X1, 4(DI)
	VEXTRACTF128 $1, Y2, X8
	VADDPS       X8, X2, X2
	VHADDPS      X2, X2, X2
	VHADDPS      X2, X2, X2
	MOVSS        X2, 8(DI)
	VEXTRACTF128 $1, Y3, X8
	VADDPS       X8, X3, X3
	VHADDPS      X3, X3, X3
	VHADDPS      X3, X3, X3
	MOVSS        X3, 12(DI)
	VZEROUPPER
	RET
