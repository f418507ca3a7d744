// Command gemmgen writes gemm_amd64.s, the register-blocked micro-kernels
// of mathfn's GEMM for amd64: C[MR x NR] += A~ * B~ over k, where A~ holds
// MR values per step (a packed panel of op(A)) and B~ NR values per step (a
// packed panel of op(B)). Each step broadcasts the MR values of A~ in turn
// and multiplies them into the NR values of B~, kept in two vector
// registers, accumulating row i of the tile in two registers of its own;
// at the end the accumulators are added to C's rows.
//
// Run by `go generate ./mathfn/` (see gemm_amd64.go).
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// kernel describes one micro-kernel.
type kernel struct {
	name     string
	elem     int    // element size in bytes
	vec      int    // vector size in bytes
	reg      string // "Y" or "Z"
	suffix   string // "PS" or "PD"
	bcast    string // "VBROADCASTSS" or "VBROADCASTSD"
	zero     string // instruction that zeroes a register: op r, r, r
	mr       int    // rows of the tile
	astep    int    // values of A~ per step, if not mr (a panel's first mr)
	bstep    int    // values of B~ per step, if not nr (a panel's first nr)
	nvec     int    // vectors per row (NR = nvec * lanes)
	unroll   int
	comments string
	// set: the kernel stores the product to C instead of adding it (the
	// first block of k of a product with beta 0: C is neither cleared
	// first nor read).
	set bool
	// tiles: the kernel computes n tiles in a row, each reading A~, B~
	// and C aStep, bStep and cStep bytes past the one before (a column of
	// tiles down C, or a row across it): one call, and one change of
	// MXCSR, for a strip of a macro-block.
	tiles bool
	// embed: the FMAs read A~'s values as embedded broadcasts (AVX-512's
	// .BCST) instead of each broadcast into a register first. With one
	// vector of B~ a row there is a broadcast per FMA, and the kernel ran
	// at 3/4 of the whole tile's rate (44 against 59 GMAC/s on a core of
	// an AMD EPYC, Zen 4, in L1); embedded, at the whole tile's.
	embed bool
	// prefetchC: the kernel asks for its tile's rows of C at the start,
	// so that they are in the L1 cache when the product, some thousands
	// of cycles later, adds to them or stores them (the rows are ldc
	// apart: the hardware prefetchers do not follow them).
	prefetchC bool
}

func (k kernel) lanes() int { return k.vec / k.elem }

// aStep is the distance in bytes between steps of A~.
func (k kernel) aStep() int {
	if k.astep > 0 {
		return k.astep * k.elem
	}
	return k.mr * k.elem
}
func (k kernel) nr() int { return k.nvec * k.lanes() }

func (k kernel) acc(i, j int) string { return fmt.Sprintf("%s%d", k.reg, i*k.nvec+j) }
func (k kernel) b(j int) string      { return fmt.Sprintf("%s%d", k.reg, k.mr*k.nvec+j) }
func (k kernel) t(i int) string      { return fmt.Sprintf("%s%d", k.reg, k.mr*k.nvec+k.nvec+i%2) }

// step writes one k step reading A~ at aOff(AX) and B~ at bOff(BX).
func (k kernel) step(w io.Writer, aOff, bOff int) {
	for j := range k.nvec {
		fmt.Fprintf(w, "\tVMOVUPS %d(BX), %s\n", bOff+j*k.vec, k.b(j))
	}
	for i := range k.mr {
		if k.embed {
			for j := range k.nvec {
				fmt.Fprintf(w, "\tVFMADD231%s.BCST %d(AX), %s, %s\n", k.suffix, aOff+i*k.elem, k.b(j), k.acc(i, j))
			}
			continue
		}
		fmt.Fprintf(w, "\t%s %d(AX), %s\n", k.bcast, aOff+i*k.elem, k.t(i))
		for j := range k.nvec {
			fmt.Fprintf(w, "\tVFMADD231%s %s, %s, %s\n", k.suffix, k.b(j), k.t(i), k.acc(i, j))
		}
	}
}

func (k kernel) write(w io.Writer) {
	aStep, bStep := k.aStep(), k.nr()*k.elem
	if k.bstep > 0 {
		bStep = k.bstep * k.elem
	}
	shift := map[int]int{4: 2, 8: 3}[k.elem]
	if k.tiles {
		fmt.Fprintf(w, "\n// func %s(k int, a, b, c unsafe.Pointer, ldc, n, aStep, bStep, cStep int)\n", k.name)
		fmt.Fprintf(w, "// n %d x %d tiles%s.\n", k.mr, k.nr(), k.comments)
		fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $8-72\n", k.name)
		flushDenormals(w)
		// A~, B~ and C of the tile in SI, DI, R14; tiles left in R9.
		fmt.Fprintf(w, "\tMOVQ a+8(FP), SI\n\tMOVQ b+16(FP), DI\n\tMOVQ c+24(FP), R14\n\tMOVQ ldc+32(FP), R8\n\tSHLQ $%d, R8\n\tMOVQ n+40(FP), R9\n", shift)
		fmt.Fprintf(w, "%s_tile:\n\tTESTQ R9, R9\n\tJEQ %s_done\n", k.name, k.name)
		fmt.Fprintf(w, "\tMOVQ k+0(FP), CX\n\tMOVQ SI, AX\n\tMOVQ DI, BX\n\tMOVQ R14, DX\n")
		// The next tile's rows of C, into the cache while this one's
		// product runs.
		fmt.Fprintf(w, "\tMOVQ R14, R11\n\tADDQ cStep+64(FP), R11\n")
		for i := range k.mr {
			fmt.Fprintf(w, "\tPREFETCHT0 (R11)\n\tPREFETCHT0 %d(R11)\n", k.nr()*k.elem-4)
			if i < k.mr-1 {
				fmt.Fprintf(w, "\tADDQ R8, R11\n")
			}
		}
	} else {
		fmt.Fprintf(w, "\n// func %s(k int, a, b, c unsafe.Pointer, ldc int)\n", k.name)
		fmt.Fprintf(w, "// %d x %d tile%s.\n", k.mr, k.nr(), k.comments)
		fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $8-40\n", k.name)
		flushDenormals(w)
		fmt.Fprintf(w, "\tMOVQ k+0(FP), CX\n\tMOVQ a+8(FP), AX\n\tMOVQ b+16(FP), BX\n\tMOVQ c+24(FP), DX\n\tMOVQ ldc+32(FP), R8\n")
		if k.prefetchC {
			fmt.Fprintf(w, "\tMOVQ R8, R9\n\tSHLQ $%d, R9\n\tMOVQ DX, R11\n", shift)
			for i := range k.mr {
				// A row's first and last bytes and every line between:
				// C's rows need not be aligned to lines.
				for off := 0; off < k.nr()*k.elem; off += 64 {
					fmt.Fprintf(w, "\tPREFETCHT0 %d(R11)\n", off)
				}
				fmt.Fprintf(w, "\tPREFETCHT0 %d(R11)\n", k.nr()*k.elem-4)
				if i < k.mr-1 {
					fmt.Fprintf(w, "\tADDQ R9, R11\n")
				}
			}
		}
	}
	for i := range k.mr {
		for j := range k.nvec {
			r := k.acc(i, j)
			fmt.Fprintf(w, "\t%s %s, %s, %s\n", k.zero, r, r, r)
		}
	}
	u := k.unroll
	fmt.Fprintf(w, "%s_loop%d:\n\tCMPQ CX, $%d\n\tJLT %s_loop1\n", k.name, u, u, k.name)
	for s := range u {
		k.step(w, s*aStep, s*bStep)
	}
	fmt.Fprintf(w, "\tADDQ $%d, AX\n\tADDQ $%d, BX\n\tSUBQ $%d, CX\n\tJMP %s_loop%d\n", u*aStep, u*bStep, u, k.name, u)
	fmt.Fprintf(w, "%s_loop1:\n\tTESTQ CX, CX\n\tJEQ %s_store\n", k.name, k.name)
	k.step(w, 0, 0)
	fmt.Fprintf(w, "\tADDQ $%d, AX\n\tADDQ $%d, BX\n\tDECQ CX\n\tJMP %s_loop1\n", aStep, bStep, k.name)
	fmt.Fprintf(w, "%s_store:\n", k.name)
	if !k.tiles {
		fmt.Fprintf(w, "\tSHLQ $%d, R8\n", shift)
	}
	for i := range k.mr {
		for j := range k.nvec {
			if !k.set {
				fmt.Fprintf(w, "\tVADD%s %d(DX), %s, %s\n", k.suffix, j*k.vec, k.acc(i, j), k.acc(i, j))
			}
			fmt.Fprintf(w, "\tVMOVUPS %s, %d(DX)\n", k.acc(i, j), j*k.vec)
		}
		if i < k.mr-1 {
			fmt.Fprintf(w, "\tADDQ R8, DX\n")
		}
	}
	if k.tiles {
		fmt.Fprintf(w, "\tADDQ aStep+48(FP), SI\n\tADDQ bStep+56(FP), DI\n\tADDQ cStep+64(FP), R14\n\tDECQ R9\n\tJMP %s_tile\n%s_done:\n", k.name, k.name)
	}
	restoreMXCSR(w)
	fmt.Fprintf(w, "\tVZEROUPPER\n\tRET\n")
}

// flushDenormals saves MXCSR and sets flush-to-zero and denormals-are-zero
// for the kernel: values below the smallest normal float (1.2e-38 for
// float32) count as 0. Training makes them (vanishing gradients), and each
// costs a microcode assist of about a hundred cycles: LeNet on random data
// ran ten times slower once its gradients reached them. The caller's
// MXCSR is restored before returning (restoreMXCSR).
func flushDenormals(w io.Writer) {
	fmt.Fprintf(w, "\tSTMXCSR mxcsr-4(SP)\n\tMOVL mxcsr-4(SP), AX\n\tORL $0x8040, AX\n\tMOVL AX, flush-8(SP)\n\tLDMXCSR flush-8(SP)\n")
}

// restoreMXCSR undoes flushDenormals.
func restoreMXCSR(w io.Writer) {
	fmt.Fprintf(w, "\tLDMXCSR mxcsr-4(SP)\n")
}

func main() {
	kernels := []kernel{
		{name: "sgemmKernelAVX512", elem: 4, vec: 64, reg: "Z", suffix: "PS", bcast: "VBROADCASTSS", zero: "VPXORD", mr: 12, nvec: 2, unroll: 4, prefetchC: true, comments: ", AVX-512F: 24 accumulators, 2 for B~, 2 broadcasts"},
		{name: "dgemmKernelAVX512", elem: 8, vec: 64, reg: "Z", suffix: "PD", bcast: "VBROADCASTSD", zero: "VPXORQ", mr: 12, nvec: 2, unroll: 4, comments: ", AVX-512F"},
		{name: "sgemmKernelAVX2", elem: 4, vec: 32, reg: "Y", suffix: "PS", bcast: "VBROADCASTSS", zero: "VXORPS", mr: 6, nvec: 2, unroll: 4, comments: ", AVX2 and FMA: 12 accumulators, 2 for B~, 2 broadcasts"},
		{name: "dgemmKernelAVX2", elem: 8, vec: 32, reg: "Y", suffix: "PD", bcast: "VBROADCASTSD", zero: "VXORPD", mr: 6, nvec: 2, unroll: 4, comments: ", AVX2 and FMA"},
	}
	// The AVX-512 float32 kernel for the last rows of a product, fewer
	// than 12: the rows of a 12-row A~ panel that exist, straight into C
	// (else the driver computes a whole tile aside and adds its rows).
	for rows := 1; rows < 12; rows++ {
		kernels = append(kernels, kernel{name: fmt.Sprintf("sgemmKernelAVX512Rows%d", rows), elem: 4, vec: 64, reg: "Z", suffix: "PS",
			bcast: "VBROADCASTSS", zero: "VPXORD", mr: rows, astep: 12, nvec: 2, unroll: 4, comments: ", the first rows of a 12-row A~ panel"})
	}
	// The kernels that store their tile (kernel.set): the AVX2 ones, and
	// the AVX-512 float32 ones (whose products with beta 0 cleared C
	// first, a twentieth of CIFAR-10 quick's training pass).
	for _, k := range kernels {
		if k.reg != "Y" && !strings.HasPrefix(k.name, "sgemmKernelAVX512") {
			continue
		}
		k.name += "Set"
		k.comments += ", storing the tile to C (not adding it)"
		k.set = true
		kernels = append(kernels, k)
	}
	// The AVX2 float32 kernel of the first 8 columns of a 16-column B~
	// panel: a product's last columns, 8 or fewer (GoogLeNet's and
	// ResNet-50's 7x7 and 14x14 planes at batch 1 leave 1 and 4), at half
	// the cost of a whole tile.
	kernels = append(kernels, kernel{name: "sgemmKernelAVX2Half", elem: 4, vec: 32, reg: "Y", suffix: "PS", bcast: "VBROADCASTSS",
		zero: "VXORPS", mr: 6, bstep: 16, nvec: 1, unroll: 4, comments: ", AVX2 and FMA, the first 8 columns of a 16-column B~ panel"})
	// The AVX-512 float32 kernel of the first 16 columns of a 32-column B~
	// panel: a product's last columns, 16 or fewer, at half the cost of a
	// whole tile: Winograd's products at batch 1 on 13x13 planes
	// (CaffeNet's conv3 to conv5) have 16 in all, the batched products of
	// 7x7 planes and CIFAR-10 quick's 8x8 ones end in such a panel.
	kernels = append(kernels, kernel{name: "sgemmKernelAVX512Half", elem: 4, vec: 64, reg: "Z", suffix: "PS", bcast: "VBROADCASTSS",
		zero: "VPXORD", mr: 12, bstep: 32, nvec: 1, unroll: 4, embed: true, comments: ", AVX-512F, the first 16 columns of a 32-column B~ panel"})
	// The float32 AVX2 kernels of strips of tiles (kernel.tiles).
	for _, k := range kernels {
		if k.reg != "Y" || k.suffix != "PS" || k.bstep > 0 {
			continue
		}
		k.name = strings.Replace(k.name, "Kernel", "Tiles", 1)
		k.comments += ", strip by strip"
		k.tiles = true
		kernels = append(kernels, k)
	}
	// The AVX2 float32 kernels of the first 1 to 5 rows of a 6-row A~
	// panel (a product's last rows), adding to C and storing to it: the
	// rows that exist, straight into C. Without them the driver computed
	// a whole tile aside and added its rows in Go: CIFAR-10 quick's 32
	// outputs leave 2 rows in every column of tiles, which then cost as
	// much as 7 of the 32.
	for _, set := range []bool{false, true} {
		for rows := 1; rows < 6; rows++ {
			k := kernel{name: fmt.Sprintf("sgemmKernelAVX2Rows%d", rows), elem: 4, vec: 32, reg: "Y", suffix: "PS", bcast: "VBROADCASTSS",
				zero: "VXORPS", mr: rows, astep: 6, nvec: 2, unroll: 4, comments: ", AVX2 and FMA, the first rows of a 6-row A~ panel", set: set}
			if set {
				k.name += "Set"
				k.comments += ", storing the tile to C (not adding it)"
			}
			kernels = append(kernels, k)
		}
	}
	var sb strings.Builder
	sb.WriteString("// Code generated by mathfn/internal/gemmgen; DO NOT EDIT.\n\n//go:build amd64 && !purego\n\n#include \"textflag.h\"\n")
	for _, k := range kernels {
		k.write(&sb)
	}
	sb.WriteString(packKernels)
	transPackKernel(&sb)
	dotKernel(&sb, "sdotKernelAVX512", "PS", 4)
	dotKernel(&sb, "ddotKernelAVX512", "PD", 8)
	if err := os.WriteFile(os.Args[1], []byte(sb.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// packKernels gather strided panels for the packing routines: for each of
// k steps, the values at src + row*ld (+ step) of rows rows (up to 32
// float32 or 16 float64), times alpha, stored as width values (32 or 12
// float32, 16 or 12 float64: an nr-wide B~ panel or an mr-wide A~ one),
// zero past rows. AVX-512 gathers do in one instruction what the Go loop
// does element by element.
const packKernels = `
DATA iota16<>+0(SB)/4, $0
DATA iota16<>+4(SB)/4, $1
DATA iota16<>+8(SB)/4, $2
DATA iota16<>+12(SB)/4, $3
DATA iota16<>+16(SB)/4, $4
DATA iota16<>+20(SB)/4, $5
DATA iota16<>+24(SB)/4, $6
DATA iota16<>+28(SB)/4, $7
DATA iota16<>+32(SB)/4, $8
DATA iota16<>+36(SB)/4, $9
DATA iota16<>+40(SB)/4, $10
DATA iota16<>+44(SB)/4, $11
DATA iota16<>+48(SB)/4, $12
DATA iota16<>+52(SB)/4, $13
DATA iota16<>+56(SB)/4, $14
DATA iota16<>+60(SB)/4, $15
GLOBL iota16<>(SB), RODATA|NOPTR, $64

// func sgemmPackAVX512(dst, src unsafe.Pointer, ld, k, rows, width int, alpha float32)
TEXT ·sgemmPackAVX512(SB), NOSPLIT, $0-52
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), AX
	MOVQ k+24(FP), R13
	MOVQ rows+32(FP), DX
	MOVQ width+40(FP), R9
	VBROADCASTSS alpha+48(FP), Z28
	// Z30: the offsets of rows 0-15 (row*ld), Z31: of rows 16-31.
	VPBROADCASTD AX, Z29
	VMOVDQU32 iota16<>(SB), Z30
	VPMULLD Z29, Z30, Z30
	MOVQ AX, BX
	SHLQ $4, BX
	VPBROADCASTD BX, Z29
	VPADDD Z29, Z30, Z31
	// R10: the lanes of rows 0-15 to gather, R11: of rows 16-31.
	MOVQ DX, CX
	CMPQ CX, $16
	JLE s_m1
	MOVQ $16, CX
s_m1:
	MOVQ $1, R10
	SHLQ CX, R10
	DECQ R10
	MOVQ DX, CX
	SUBQ $16, CX
	JGE s_m2
	XORQ CX, CX
s_m2:
	MOVQ $1, R11
	SHLQ CX, R11
	DECQ R11
	MOVQ $0xfff, R12
	KMOVW R12, K3
	SHLQ $2, R9
s_loop:
	TESTQ R13, R13
	JEQ s_done
	VPXORD Z0, Z0, Z0
	KMOVW R10, K1
	VGATHERDPS (SI)(Z30*4), K1, Z0
	VMULPS Z28, Z0, Z0
	CMPQ R9, $128
	JNE s_narrow
	VPXORD Z1, Z1, Z1
	KMOVW R11, K2
	VGATHERDPS (SI)(Z31*4), K2, Z1
	VMULPS Z28, Z1, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	JMP s_next
s_narrow:
	VMOVUPS Z0, K3, (DI)
s_next:
	ADDQ $4, SI
	ADDQ R9, DI
	DECQ R13
	JMP s_loop
s_done:
	VZEROUPPER
	RET

// func dgemmPackAVX512(dst, src unsafe.Pointer, ld, k, rows, width int, alpha float64)
TEXT ·dgemmPackAVX512(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), AX
	MOVQ k+24(FP), R13
	MOVQ rows+32(FP), DX
	MOVQ width+40(FP), R9
	VBROADCASTSD alpha+48(FP), Z28
	// Y30: the offsets of rows 0-7, Y31: of rows 8-15.
	VPBROADCASTD AX, Y29
	VMOVDQU32 iota16<>(SB), Y30
	VPMULLD Y29, Y30, Y30
	MOVQ AX, BX
	SHLQ $3, BX
	VPBROADCASTD BX, Y29
	VPADDD Y29, Y30, Y31
	// R10: the lanes of rows 0-7, R11: of rows 8-15.
	MOVQ DX, CX
	CMPQ CX, $8
	JLE d_m1
	MOVQ $8, CX
d_m1:
	MOVQ $1, R10
	SHLQ CX, R10
	DECQ R10
	MOVQ DX, CX
	SUBQ $8, CX
	JGE d_m2
	XORQ CX, CX
d_m2:
	MOVQ $1, R11
	SHLQ CX, R11
	DECQ R11
	// K3: the lanes stored of the second half: 8 for width 16, 4 for 12.
	MOVQ $0xff, R12
	CMPQ R9, $16
	JEQ d_w
	MOVQ $0xf, R12
d_w:
	KMOVW R12, K3
	SHLQ $3, R9
d_loop:
	TESTQ R13, R13
	JEQ d_done
	VPXORD Z0, Z0, Z0
	KMOVW R10, K1
	VGATHERDPD (SI)(Y30*8), K1, Z0
	VMULPD Z28, Z0, Z0
	VPXORD Z1, Z1, Z1
	KMOVW R11, K2
	VGATHERDPD (SI)(Y31*8), K2, Z1
	VMULPD Z28, Z1, Z1
	VMOVUPD Z0, (DI)
	VMOVUPD Z1, K3, 64(DI)
	ADDQ $8, SI
	ADDQ R9, DI
	DECQ R13
	JMP d_loop
d_done:
	VZEROUPPER
	RET
`

// dotKernel writes the kernel of products with a short op(A) and a
// transposed B (an inner product's forward pass at a small batch): the 16
// dot products of 4 rows of A with 4 rows of B over k (a multiple of the
// vector length), as 16 vectors of partial sums stored to out (the caller
// adds up each vector's lanes). Both operands are read along their rows,
// in place: nothing is packed, and B, read once, streams from memory.
func dotKernel(w io.Writer, name, suffix string, elem int) {
	lanes := 64 / elem
	fmt.Fprintf(w, "\n// func %s(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer)\n", name)
	fmt.Fprintf(w, "TEXT ·%s(SB), NOSPLIT, $8-48\n", name)
	flushDenormals(w)
	fmt.Fprintf(w, "\tMOVQ k+0(FP), CX\n\tMOVQ a+8(FP), AX\n\tMOVQ lda+16(FP), R8\n\tMOVQ b+24(FP), BX\n\tMOVQ ldb+32(FP), R9\n\tMOVQ out+40(FP), DI\n")
	shift := map[int]int{4: 2, 8: 3}[elem]
	fmt.Fprintf(w, "\tSHLQ $%d, R8\n\tSHLQ $%d, R9\n", shift, shift)
	// Row pointers: A rows in AX, R10, R11, R12; B rows in BX, R13, R14, SI.
	fmt.Fprintf(w, "\tLEAQ (AX)(R8*1), R10\n\tLEAQ (R10)(R8*1), R11\n\tLEAQ (R11)(R8*1), R12\n")
	fmt.Fprintf(w, "\tLEAQ (BX)(R9*1), R13\n\tLEAQ (R13)(R9*1), R14\n\tLEAQ (R14)(R9*1), SI\n")
	for i := range 16 {
		fmt.Fprintf(w, "\tVPXORD Z%d, Z%d, Z%d\n", i, i, i)
	}
	fmt.Fprintf(w, "\tXORQ DX, DX\n%s_loop:\n\tCMPQ DX, CX\n\tJGE %s_store\n", name, name)
	brows := []string{"BX", "R13", "R14", "SI"}
	arows := []string{"AX", "R10", "R11", "R12"}
	for j, r := range brows {
		fmt.Fprintf(w, "\tVMOVUP%s (%s)(DX*%d), Z%d\n", suffix[1:], r, elem, 16+j)
	}
	for i, r := range arows {
		fmt.Fprintf(w, "\tVMOVUP%s (%s)(DX*%d), Z20\n", suffix[1:], r, elem)
		for j := range 4 {
			fmt.Fprintf(w, "\tVFMADD231%s Z%d, Z20, Z%d\n", suffix, 16+j, i*4+j)
		}
		_ = i
	}
	fmt.Fprintf(w, "\tADDQ $%d, DX\n\tJMP %s_loop\n%s_store:\n", lanes, name, name)
	for i := range 16 {
		fmt.Fprintf(w, "\tVMOVUP%s Z%d, %d(DI)\n", suffix[1:], i, i*64)
	}
	restoreMXCSR(w)
	fmt.Fprintf(w, "\tVZEROUPPER\n\tRET\n")
}

// transPackKernel writes sgemmTransPackAVX512, which packs panels as the
// gathers of packKernels do, without gathers: 16 (or 12) rows at a time
// and 16 steps at a time, each row's 64 bytes loaded at once and the 16 x
// 16 block transposed in registers (32-bit unpacks of row pairs, 64-bit
// unpacks of pair pairs, then two rounds of 128-bit lane shuffles). A
// gather fetches one element per lane; the profile of the small products
// of LeNet and CIFAR-10 quick had a third to a half of their time in
// them.
//
// For each of blocks*16 steps p it sets dst[p*width + r] =
// alpha*src[r*ld + p] for r < rows (12 or 16) and writes no other lane.
func transPackKernel(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("\n// func sgemmTransPackAVX512(dst, src unsafe.Pointer, ld, blocks, rows, width int, alpha float32)")
	p("TEXT ·sgemmTransPackAVX512(SB), NOSPLIT, $0-52")
	p("\tMOVQ dst+0(FP), DI\n\tMOVQ src+8(FP), SI\n\tMOVQ ld+16(FP), R8\n\tMOVQ blocks+24(FP), CX")
	p("\tMOVQ rows+32(FP), BX\n\tMOVQ width+40(FP), DX")
	// Rows 0-3 at SI, 4-7 at R10, 8-11 at R11, 12-15 at R12, each group
	// as base, base+ld, base+2ld, base+3ld (R8 = ld, R9 = 3ld, in bytes).
	p("\tSHLQ $2, R8\n\tLEAQ (R8)(R8*2), R9\n\tLEAQ (SI)(R8*4), R10\n\tLEAQ (R10)(R8*4), R11\n\tLEAQ (R11)(R8*4), R12")
	// DX: one step of dst in bytes; R13: four steps. K3: the lanes stored.
	p("\tSHLQ $2, DX\n\tLEAQ (DX*4), R13")
	p("\tMOVQ $0xffff, AX\n\tCMPQ BX, $16\n\tJEQ tp_mask\n\tMOVQ $0xfff, AX\ntp_mask:\n\tKMOVW AX, K3")
	p("tp_loop:\n\tTESTQ CX, CX\n\tJEQ tp_done")
	bases := []string{"SI", "R10", "R11", "R12"}
	index := []string{"", "(R8*1)", "(R8*2)", "(R9*1)"}
	for g := range 3 {
		for r := range 4 {
			p("\tVMOVUPS (%s)%s, Z%d", bases[g], index[r], 4*g+r)
		}
	}
	p("\tCMPQ BX, $16\n\tJEQ tp_full")
	for r := 12; r < 16; r++ {
		p("\tVPXORD Z%d, Z%d, Z%d", r, r, r)
	}
	p("\tJMP tp_rows\ntp_full:")
	for r := range 4 {
		p("\tVMOVUPS (R12)%s, Z%d", index[r], 12+r)
	}
	p("tp_rows:")
	// Z16+2i, Z17+2i: rows 2i and 2i+1 interleaved, low and high halves
	// of each 128-bit lane.
	for i := range 8 {
		p("\tVUNPCKLPS Z%d, Z%d, Z%d", 2*i+1, 2*i, 16+2*i)
		p("\tVUNPCKHPS Z%d, Z%d, Z%d", 2*i+1, 2*i, 17+2*i)
	}
	// Z4g+j: in 128-bit lane L, step 4L+j of rows 4g..4g+3.
	for g := range 4 {
		t := 16 + 4*g
		p("\tVUNPCKLPD Z%d, Z%d, Z%d", t+2, t, 4*g)
		p("\tVUNPCKHPD Z%d, Z%d, Z%d", t+2, t, 4*g+1)
		p("\tVUNPCKLPD Z%d, Z%d, Z%d", t+3, t+1, 4*g+2)
		p("\tVUNPCKHPD Z%d, Z%d, Z%d", t+3, t+1, 4*g+3)
	}
	p("\tVBROADCASTSS alpha+48(FP), Z31\n\tMOVQ DI, AX")
	// Steps j, 4+j, 8+j and 12+j: lane L of each group's Zj, in group
	// order.
	for j := range 4 {
		p("\tVSHUFF32X4 $0x44, Z%d, Z%d, Z16", 4+j, j)
		p("\tVSHUFF32X4 $0xEE, Z%d, Z%d, Z17", 4+j, j)
		p("\tVSHUFF32X4 $0x44, Z%d, Z%d, Z18", 12+j, 8+j)
		p("\tVSHUFF32X4 $0xEE, Z%d, Z%d, Z19", 12+j, 8+j)
		p("\tVSHUFF32X4 $0x88, Z18, Z16, Z20\n\tVSHUFF32X4 $0xDD, Z18, Z16, Z21")
		p("\tVSHUFF32X4 $0x88, Z19, Z17, Z22\n\tVSHUFF32X4 $0xDD, Z19, Z17, Z23")
		for o := 20; o < 24; o++ {
			p("\tVMULPS Z31, Z%d, Z%d", o, o)
		}
		p("\tLEAQ (AX)(R13*2), R14")
		p("\tVMOVUPS Z20, K3, (AX)\n\tVMOVUPS Z21, K3, (AX)(R13*1)\n\tVMOVUPS Z22, K3, (R14)\n\tVMOVUPS Z23, K3, (R14)(R13*1)")
		if j < 3 {
			p("\tADDQ DX, AX")
		}
	}
	p("\tADDQ $64, SI\n\tADDQ $64, R10\n\tADDQ $64, R11\n\tADDQ $64, R12\n\tLEAQ (DI)(R13*4), DI")
	p("\tDECQ CX\n\tJMP tp_loop\ntp_done:\n\tVZEROUPPER\n\tRET")
}
