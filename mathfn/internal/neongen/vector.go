package main

import "fmt"

// arrs names the element types' arrangements, for kernel names.
var arrs = []struct {
	suffix string
	arr    arrangement
}{{"F32", s4}, {"F64", d2}}

// fourAndOne writes a loop over n elements (a multiple of the lanes) in
// R3: body(v) computes v vectors in V0.. (loaded from and stored to where
// it likes), four at a time while four remain, then one at a time.
func fourAndOne(w *asm, a arrangement, count string, body func(v int)) {
	l := a.lanes()
	w.p("loop4:\n\tCMP $%d, %s\n\tBLT loop1", 4*l, count)
	body(4)
	w.p("\tSUB $%d, %s\n\tB loop4", 4*l, count)
	w.p("loop1:\n\tCBZ %s, done", count)
	body(1)
	w.p("\tSUB $%d, %s\n\tB loop1", l, count)
	w.p("done:\n\tRET")
}

// elementwiseFile writes the kernels of elementwise_arm64.go.
func elementwiseFile(w *asm) {
	header(w, "Element-wise kernels over n values (a multiple of the lanes): the IEEE\n// operations, correctly rounded, as the Go loops compute them; a product\n// is rounded before a sum (FMUL then FADD, never a fused FMLA).")
	binary := []struct {
		name string
		op   func(a arrangement, d, n, m int) inst
	}{{"add", fadd}, {"sub", fsub}, {"mul", fmul}, {"div", fdiv}}
	for _, e := range arrs {
		for _, b := range binary {
			name := fmt.Sprintf("%s%sNEON", b.name, e.suffix)
			a := e.arr
			w.p("\n// func %s(a, b, y unsafe.Pointer, n int)\n// y = a %s b.", name, b.name)
			w.p("TEXT ·%s(SB), NOSPLIT, $0-32", name)
			w.p("\tMOVD a+0(FP), R0\n\tMOVD b+8(FP), R1\n\tMOVD y+16(FP), R2\n\tMOVD n+24(FP), R3")
			fourAndOne(w, a, "R3", func(v int) {
				w.p("\tVLD1.P %d(R0), %s", 16*v, regList(0, v, a))
				w.p("\tVLD1.P %d(R1), %s", 16*v, regList(4, v, a))
				for r := range v {
					w.i(b.op(a, r, r, 4+r))
				}
				w.p("\tVST1.P %s, %d(R2)", regList(0, v, a), 16*v)
			})
		}
	}
	// y = a * alpha (V30), then nothing, + beta (V31), or + y.
	scalar := []struct{ name, doc string }{
		{"mulScalar", "y = a * alpha"}, {"mulAddScalar", "y = a * alpha + beta"}, {"addScaled", "y += a * alpha"}}
	for _, e := range arrs {
		for _, s := range scalar {
			name := fmt.Sprintf("%s%sNEON", s.name, e.suffix)
			a := e.arr
			size := a.elem()
			w.p("\n// func %s(a, y unsafe.Pointer, n int, alpha, beta float%d)\n// %s.", name, 8*size, s.doc)
			w.p("TEXT ·%s(SB), NOSPLIT, $0-%d", name, 24+2*size)
			w.p("\tMOVD a+0(FP), R0\n\tMOVD y+8(FP), R2\n\tMOVD n+16(FP), R3")
			mov, lane := "FMOVS", "S"
			if a == d2 {
				mov, lane = "FMOVD", "D"
			}
			w.p("\t%s alpha+24(FP), F30\n\tVDUP V30.%s[0], V30.%s", mov, lane, a.goName())
			w.p("\t%s beta+%d(FP), F31\n\tVDUP V31.%s[0], V31.%s", mov, 24+size, lane, a.goName())
			fourAndOne(w, a, "R3", func(v int) {
				w.p("\tVLD1.P %d(R0), %s", 16*v, regList(0, v, a))
				if s.name == "addScaled" {
					w.p("\tVLD1 (R2), %s", regList(4, v, a))
				}
				for r := range v {
					w.i(fmul(a, r, r, 30))
					switch s.name {
					case "mulAddScalar":
						w.i(fadd(a, r, r, 31))
					case "addScaled":
						w.i(fadd(a, r, 4+r, r))
					}
				}
				w.p("\tVST1.P %s, %d(R2)", regList(0, v, a), 16*v)
			})
		}
	}
}

// rowsFile writes the kernels of rows_arm64.go: rows rows, their starts
// dstStride and srcStride bytes apart.
func rowsFile(w *asm) {
	header(w, "The row kernels of rows_arm64.go: rows rows, their starts dstStride\n// and srcStride bytes apart. Rows of a few elements are the common case\n// (LeNet's conv2: 8), where a call of copy's memmove per row cost more\n// than the copying.")
	w.p("\n// func copyRowsNEON(dst, src unsafe.Pointer, bytes, rows, dstStride, srcStride int)")
	w.p("// Copies bytes bytes (a multiple of 4) a row.")
	w.p("TEXT ·copyRowsNEON(SB), NOSPLIT, $0-48")
	w.p("\tMOVD dst+0(FP), R0\n\tMOVD src+8(FP), R1\n\tMOVD bytes+16(FP), R2\n\tMOVD rows+24(FP), R3\n\tMOVD dstStride+32(FP), R4\n\tMOVD srcStride+40(FP), R5")
	w.p("row:\n\tCBZ R3, done\n\tMOVD R0, R6\n\tMOVD R1, R7\n\tMOVD R2, R8")
	w.p("c64:\n\tCMP $64, R8\n\tBLT c16\n\tVLD1.P 64(R7), %s\n\tVST1.P %s, 64(R6)\n\tSUB $64, R8\n\tB c64", regList(0, 4, s4), regList(0, 4, s4))
	w.p("c16:\n\tCMP $16, R8\n\tBLT c8\n\tVLD1.P 16(R7), [V0.S4]\n\tVST1.P [V0.S4], 16(R6)\n\tSUB $16, R8\n\tB c16")
	w.p("c8:\n\tCMP $8, R8\n\tBLT c4\n\tMOVD.P 8(R7), R9\n\tMOVD.P R9, 8(R6)\n\tSUB $8, R8")
	w.p("c4:\n\tCBZ R8, next\n\tMOVWU (R7), R9\n\tMOVW R9, (R6)")
	w.p("next:\n\tADD R4, R0\n\tADD R5, R1\n\tSUB $1, R3\n\tB row\ndone:\n\tRET")
	for _, e := range arrs {
		a := e.arr
		name := fmt.Sprintf("addRows%sNEON", e.suffix)
		l := a.lanes()
		mov, add := "FMOVS", "FADDS"
		if a == d2 {
			mov, add = "FMOVD", "FADDD"
		}
		w.p("\n// func %s(dst, src unsafe.Pointer, n, rows, dstStride, srcStride int)", name)
		w.p("// dst += src, n elements a row.")
		w.p("TEXT ·%s(SB), NOSPLIT, $0-48", name)
		w.p("\tMOVD dst+0(FP), R0\n\tMOVD src+8(FP), R1\n\tMOVD n+16(FP), R2\n\tMOVD rows+24(FP), R3\n\tMOVD dstStride+32(FP), R4\n\tMOVD srcStride+40(FP), R5")
		w.p("row:\n\tCBZ R3, done\n\tMOVD R0, R6\n\tMOVD R1, R7\n\tMOVD R2, R8")
		for _, v := range []int{4, 1} {
			next := "s1"
			if v == 4 {
				next = "v1"
			}
			w.p("v%d:\n\tCMP $%d, R8\n\tBLT %s", v, v*l, next)
			w.p("\tVLD1 (R6), %s\n\tVLD1.P %d(R7), %s", regList(0, v, a), 16*v, regList(4, v, a))
			for r := range v {
				w.i(fadd(a, r, r, 4+r))
			}
			w.p("\tVST1.P %s, %d(R6)\n\tSUB $%d, R8\n\tB v%d", regList(0, v, a), 16*v, v*l, v)
		}
		w.p("s1:\n\tCBZ R8, next\n\t%s (R6), F0\n\t%s.P %d(R7), F1\n\t%s F1, F0\n\t%s.P F0, %d(R6)\n\tSUB $1, R8\n\tB s1",
			mov, mov, a.elem(), add, mov, a.elem())
		w.p("next:\n\tADD R4, R0\n\tADD R5, R1\n\tSUB $1, R3\n\tB row\ndone:\n\tRET")
	}
}

// vecFile writes the kernels of mathfn/internal/vec's relu_arm64.go and
// negpow_arm64.go.
func vecFile(w *asm) {
	header(w, "The layers' vector kernels: the zero-slope ReLU and LRN's powers.")
	w.p(`
// The zero-slope ReLU, y = max(x, 0) + 0 * min(x, 0) as Caffe computes it,
// over n values (a multiple of the lanes), as reluBits computes it on the
// bits: +0 where x is negative and finite (FCMLT: not -0, not a NaN), the
// NaN reluBits puts for 0 * -Inf (x86's default NaN, whatever this CPU's
// is, so that a value's result does not depend on its place in a vector)
// where x is -Inf, x elsewhere. V28 zero, V29 -Inf, V30 that NaN.`)
	for _, e := range arrs {
		a := e.arr
		name := fmt.Sprintf("relu%sNEON", e.suffix)
		w.p("\n// func %s(x, y unsafe.Pointer, n int)", name)
		w.p("TEXT ·%s(SB), NOSPLIT, $0-24", name)
		w.p("\tMOVD x+0(FP), R0\n\tMOVD y+8(FP), R2\n\tMOVD n+16(FP), R3")
		w.p("\tVEOR V28.B16, V28.B16, V28.B16")
		if a == s4 {
			w.p("\tMOVW $0xff800000, R4\n\tVDUP R4, V29.S4\n\tMOVW $0xffc00000, R4\n\tVDUP R4, V30.S4")
		} else {
			w.p("\tMOVD $0xfff0000000000000, R4\n\tVDUP R4, V29.D2\n\tMOVD $0xfff8000000000000, R4\n\tVDUP R4, V30.D2")
		}
		fourAndOne(w, a, "R3", func(v int) {
			w.p("\tVLD1.P %d(R0), %s", 16*v, regList(0, v, a))
			for r := range v {
				w.p("\tVCMEQ V29.%s, V%d.%s, V%d.%s", a.goName(), r, a.goName(), 8+r, a.goName())
				w.i(fcmlt0(a, 4+r, r))
				w.p("\tVBIT V%d.B16, V28.B16, V%d.B16", 4+r, r)
				w.p("\tVBIT V%d.B16, V30.B16, V%d.B16", 8+r, r)
			}
			w.p("\tVST1.P %s, %d(R2)", regList(0, v, a), 16*v)
		})
	}
	w.p(`
// func negPowF32NEON(src, dst unsafe.Pointer, n, form int)
//
// dst[i] = s^-beta for n (a multiple of 4) float32 values s of src, each
// widened to float64 and computed as negPow does, with correctly rounded
// square roots, products and quotients, then rounded to float32: form 0
// (beta 0.75) 1 / (r * sqrt(r)) with r = sqrt(s), form 1 (0.5)
// 1 / sqrt(s), form 2 (1) 1 / s. The low two values in V1, V3, V5, the
// high two in V2, V4, V6; V31 holds 1.0.
TEXT ·negPowF32NEON(SB), NOSPLIT, $0-32
	MOVD src+0(FP), R0
	MOVD dst+8(FP), R2
	MOVD n+16(FP), R3
	MOVD form+24(FP), R4
	MOVD $0x3ff0000000000000, R5
	VDUP R5, V31.D2
	CMP $1, R4
	BEQ half
	BGT one`)
	forms := []struct {
		label string
		body  func(lo int) // computes 1/x of V[lo] into V[lo+2]
	}{
		{"quarters", func(s int) {
			w.i(fsqrt(d2, s+2, s))
			w.i(fsqrt(d2, s+4, s+2))
			w.i(fmul(d2, s+2, s+2, s+4))
			w.i(fdiv(d2, s+2, 31, s+2))
		}},
		{"half", func(s int) {
			w.i(fsqrt(d2, s+2, s))
			w.i(fdiv(d2, s+2, 31, s+2))
		}},
		{"one", func(s int) {
			w.i(fdiv(d2, s+2, 31, s))
		}},
	}
	for _, f := range forms {
		w.p("%s:\n\tVLD1.P 16(R0), [V0.S4]", f.label)
		w.i(fcvtl(1, 0))
		w.i(fcvtl2(2, 0))
		f.body(1)
		f.body(2)
		w.i(fcvtn(7, 3))
		w.i(fcvtn2(7, 4))
		w.p("\tVST1.P [V7.S4], 16(R2)\n\tSUB $4, R3\n\tCBNZ R3, %s\n\tRET", f.label)
	}
}
