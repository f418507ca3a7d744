package main

import "fmt"

// Go's arm64 assembler has no mnemonics for the floating-point vector
// arithmetic (FADD, FMUL, FDIV, FSQRT, FCMLT, the conversions between
// widths) nor for FMLA by element, which the GEMM kernels are built on:
// the kernels write them as WORDs, encoded here from the Arm
// Architecture Reference Manual (A64, "Advanced SIMD three same",
// "two-register miscellaneous" and "vector x indexed element"), each with
// its disassembly as a comment. enc_test.go holds the encodings to what
// GNU objdump decodes.

// arrangement is a vector's shape: four float32 lanes or two float64.
type arrangement int

const (
	s4 arrangement = iota // .4S
	d2                    // .2D
)

func (a arrangement) String() string { return [...]string{"4s", "2d"}[a] }

// go is the arrangement's spelling in Go's assembler.
func (a arrangement) goName() string { return [...]string{"S4", "D2"}[a] }

// lanes is the number of elements in a 128-bit vector.
func (a arrangement) lanes() int { return [...]int{4, 2}[a] }

// elem is the element size in bytes.
func (a arrangement) elem() int { return [...]int{4, 8}[a] }

// sz is the size bit of the floating-point encodings (bit 22).
func (a arrangement) sz() uint32 { return uint32(a) }

// inst is one encoded instruction and its disassembly.
type inst struct {
	word uint32
	text string
}

// String writes it as a line of Go assembly.
func (i inst) String() string { return fmt.Sprintf("WORD $0x%08x // %s", i.word, i.text) }

// three encodes "Advanced SIMD three same" with Q = 1: base holds U, the
// opcode and bit 21; the size bit comes from the arrangement.
func three(name string, base uint32, a arrangement, d, n, m int) inst {
	w := base | a.sz()<<22 | uint32(m)<<16 | uint32(n)<<5 | uint32(d)
	return inst{w, fmt.Sprintf("%s v%d.%s, v%d.%s, v%d.%s", name, d, a, n, a, m, a)}
}

// fadd is Vd = Vn + Vm.
func fadd(a arrangement, d, n, m int) inst { return three("fadd", 0x4e20d400, a, d, n, m) }

// fsub is Vd = Vn - Vm.
func fsub(a arrangement, d, n, m int) inst { return three("fsub", 0x4ea0d400, a, d, n, m) }

// fmul is Vd = Vn * Vm.
func fmul(a arrangement, d, n, m int) inst { return three("fmul", 0x6e20dc00, a, d, n, m) }

// fdiv is Vd = Vn / Vm.
func fdiv(a arrangement, d, n, m int) inst { return three("fdiv", 0x6e20fc00, a, d, n, m) }

// two encodes "Advanced SIMD two-register miscellaneous" with the size bit
// from the arrangement.
func two(name, suffix string, base uint32, a arrangement, d, n int) inst {
	w := base | a.sz()<<22 | uint32(n)<<5 | uint32(d)
	return inst{w, fmt.Sprintf("%s v%d.%s, v%d.%s%s", name, d, a, n, a, suffix)}
}

// fsqrt is Vd = sqrt(Vn), correctly rounded.
func fsqrt(a arrangement, d, n int) inst { return two("fsqrt", "", 0x6ea1f800, a, d, n) }

// fcmlt0 sets each lane of Vd to all ones where Vn's is less than zero (a
// negative number or -Inf; not -0, not a NaN), else to zero.
func fcmlt0(a arrangement, d, n int) inst { return two("fcmlt", ", #0.0", 0x4ea0e800, a, d, n) }

// fcvtl widens the low two float32 lanes of Vn to float64 (exactly);
// fcvtl2 the high two.
func fcvtl(d, n int) inst {
	return inst{0x0e617800 | uint32(n)<<5 | uint32(d), fmt.Sprintf("fcvtl v%d.2d, v%d.2s", d, n)}
}

func fcvtl2(d, n int) inst {
	return inst{0x4e617800 | uint32(n)<<5 | uint32(d), fmt.Sprintf("fcvtl2 v%d.2d, v%d.4s", d, n)}
}

// fcvtn rounds Vn's two float64 lanes to float32 (to nearest, ties to
// even, as Go's conversion) into the low half of Vd, clearing the high
// half; fcvtn2 into the high half, keeping the low one.
func fcvtn(d, n int) inst {
	return inst{0x0e616800 | uint32(n)<<5 | uint32(d), fmt.Sprintf("fcvtn v%d.2s, v%d.2d", d, n)}
}

func fcvtn2(d, n int) inst {
	return inst{0x4e616800 | uint32(n)<<5 | uint32(d), fmt.Sprintf("fcvtn2 v%d.4s, v%d.2d", d, n)}
}

// fmlaElem is Vd += Vn * Vm[index], one fused multiply-add a lane (the
// product is not rounded before the sum). Any of the 32 registers may be
// Vm: for float32 the index is H:L and M:Rm the register; for float64 the
// index is H.
func fmlaElem(a arrangement, d, n, m, index int) inst {
	w := uint32(0x4f801000) | a.sz()<<22 | uint32(m)<<16 | uint32(n)<<5 | uint32(d)
	lane := "s"
	if a == s4 {
		w |= uint32(index&1)<<21 | uint32(index>>1)<<11
	} else {
		w |= uint32(index) << 11
		lane = "d"
	}
	return inst{w, fmt.Sprintf("fmla v%d.%s, v%d.%s, v%d.%s[%d]", d, a, n, a, m, lane, index)}
}
