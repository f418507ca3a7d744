package main

import "fmt"

// gemmKernel describes one GEMM micro-kernel. Each step loads the panel's
// values of A~ (panel of them, in whole vectors) and the NR values of B~
// (nvec vectors), and multiplies every B~ vector by each of the first mr
// values of A~ in turn with FMLA by element (no broadcasts), accumulating
// row i of the tile in nvec registers of its own; at the end the
// accumulators are added to C's rows. Registers: V0-V23 accumulators,
// V24-V26 B~, V27-V30 A~.
type gemmKernel struct {
	name   string
	arr    arrangement
	mr     int // rows of the tile
	panel  int // values of A~ per step (the panel's rows; mr for a whole tile)
	nvec   int // vectors of B~ per step: NR = nvec * lanes
	unroll int
	doc    string
}

const (
	bReg = 24 // first B~ register
	aReg = 27 // first A~ register
)

func (k gemmKernel) acc(i, j int) int { return i*k.nvec + j }
func (k gemmKernel) nr() int          { return k.nvec * k.arr.lanes() }
func (k gemmKernel) aVecs() int       { return k.panel * k.arr.elem() / 16 }

// step writes one k step, advancing a and b past it.
func (k gemmKernel) step(w *asm) {
	a := k.arr
	w.p("\tVLD1.P %d(R1), %s", k.panel*a.elem(), regList(aReg, k.aVecs(), a))
	w.p("\tVLD1.P %d(R2), %s", k.nr()*a.elem(), regList(bReg, k.nvec, a))
	for i := range k.mr {
		for j := range k.nvec {
			w.i(fmlaElem(a, k.acc(i, j), bReg+j, aReg+i/a.lanes(), i%a.lanes()))
		}
	}
}

func (k gemmKernel) write(w *asm) {
	a := k.arr
	w.p("\n// func %s(k int, a, b, c unsafe.Pointer, ldc int)", k.name)
	w.p("// %d x %d tile%s.", k.mr, k.nr(), k.doc)
	w.p("TEXT ·%s(SB), NOSPLIT, $0-40", k.name)
	w.p("\tMOVD k+0(FP), R0\n\tMOVD a+8(FP), R1\n\tMOVD b+16(FP), R2\n\tMOVD c+24(FP), R3\n\tMOVD ldc+32(FP), R4")
	for r := range k.mr * k.nvec {
		w.p("\tVEOR V%d.B16, V%d.B16, V%d.B16", r, r, r)
	}
	u := k.unroll
	w.p("loop%d:\n\tCMP $%d, R0\n\tBLT loop1", u, u)
	for range u {
		k.step(w)
	}
	w.p("\tSUB $%d, R0\n\tB loop%d", u, u)
	w.p("loop1:\n\tCBZ R0, store")
	k.step(w)
	w.p("\tSUB $1, R0\n\tB loop1")
	// C's row i into the B~ registers, plus the row's accumulators, stored
	// from them.
	w.p("store:\n\tLSL $%d, R4", map[int]int{4: 2, 8: 3}[a.elem()])
	for i := range k.mr {
		w.p("\tVLD1 (R3), %s", regList(bReg, k.nvec, a))
		for j := range k.nvec {
			w.i(fadd(a, k.acc(i, j), k.acc(i, j), bReg+j))
		}
		w.p("\tVST1 %s, (R3)", regList(k.acc(i, 0), k.nvec, a))
		if i < k.mr-1 {
			w.p("\tADD R4, R3")
		}
	}
	w.p("\tRET")
}

// dotKernel writes the kernel of products with a short op(A) and a
// transposed B (an inner product's forward pass at a small batch): the 16
// dot products of 4 rows of A with 4 rows of B over k (a multiple of the
// lanes), as 16 vectors of partial sums stored to out (the caller adds up
// each vector's lanes). Both operands are read along their rows, in
// place: nothing is packed, and B, read once, streams from memory.
// Registers: V0-V15 the sums (A row r by B row q in V4r+q), V16-V19 B,
// V20-V23 A; rows of A at R1, R6, R7, R8 and of B at R3, R9, R10, R11.
func dotKernel(w *asm, name string, a arrangement) {
	w.p("\n// func %s(k int, a unsafe.Pointer, lda int, b unsafe.Pointer, ldb int, out unsafe.Pointer)", name)
	w.p("TEXT ·%s(SB), NOSPLIT, $0-48", name)
	w.p("\tMOVD k+0(FP), R0\n\tMOVD a+8(FP), R1\n\tMOVD lda+16(FP), R2\n\tMOVD b+24(FP), R3\n\tMOVD ldb+32(FP), R4\n\tMOVD out+40(FP), R5")
	shift := map[int]int{4: 2, 8: 3}[a.elem()]
	w.p("\tLSL $%d, R2\n\tLSL $%d, R4", shift, shift)
	w.p("\tADD R2, R1, R6\n\tADD R2, R6, R7\n\tADD R2, R7, R8")
	w.p("\tADD R4, R3, R9\n\tADD R4, R9, R10\n\tADD R4, R10, R11")
	for r := range 16 {
		w.p("\tVEOR V%d.B16, V%d.B16, V%d.B16", r, r, r)
	}
	w.p("loop:\n\tCBZ R0, store")
	for q, r := range []string{"R3", "R9", "R10", "R11"} {
		w.p("\tVLD1.P 16(%s), [V%d.%s]", r, 16+q, a.goName())
	}
	for i, r := range []string{"R1", "R6", "R7", "R8"} {
		w.p("\tVLD1.P 16(%s), [V%d.%s]", r, 20+i, a.goName())
	}
	for i := range 4 {
		for q := range 4 {
			w.p("\tVFMLA V%d.%s, V%d.%s, V%d.%s", 16+q, a.goName(), 20+i, a.goName(), 4*i+q, a.goName())
		}
	}
	w.p("\tSUB $%d, R0\n\tB loop\nstore:", a.lanes())
	for g := range 4 {
		w.p("\tVST1.P %s, 64(R5)", regList(4*g, 4, a))
	}
	w.p("\tRET")
}

func gemmFile(w *asm) {
	header(w, "The GEMM micro-kernels of gemm_arm64.go. FMLA is fused (the product\n// is not rounded before the sum), as the AVX kernels' FMAs are.")
	kernels := []gemmKernel{
		{name: "sgemmKernelNEON", arr: s4, mr: 8, panel: 8, nvec: 3, unroll: 4, doc: ", float32: 24 accumulators, 3 vectors of B~, 2 of A~"},
		{name: "dgemmKernelNEON", arr: d2, mr: 8, panel: 8, nvec: 3, unroll: 4, doc: ", float64: 24 accumulators, 3 vectors of B~, 4 of A~"},
	}
	// The kernels of a product's last rows, fewer than 8: the rows of an
	// 8-row A~ panel that exist, straight into C (else the driver computes
	// a whole tile aside and adds its rows).
	for rows := 1; rows < 8; rows++ {
		for _, base := range kernels[:2] {
			k := base
			k.name, k.mr, k.doc = fmt.Sprintf("%sRows%d", base.name, rows), rows, ", the first rows of an 8-row A~ panel"
			kernels = append(kernels, k)
		}
	}
	for _, k := range kernels {
		k.write(w)
	}
	dotKernel(w, "sdotKernelNEON", s4)
	dotKernel(w, "ddotKernelNEON", d2)
}
