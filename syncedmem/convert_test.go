package syncedmem

import (
	"math"
	"testing"
)

// Golden conversions, checked against IEEE 754 binary16 and bfloat16 with
// round to nearest even (numpy's float16, PyTorch's bfloat16).
func TestNarrowWidenGolden(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	inf := float32(math.Inf(1))
	cases := []struct {
		s    Storage
		in   float32
		bits uint16
		back float32 // the value Widen gives back
	}{
		{StorageFloat16, 1, 0x3C00, 1},
		{StorageFloat16, -2.5, 0xC100, -2.5},
		{StorageFloat16, 0.1, 0x2E66, 0.0999755859375},
		{StorageFloat16, 65504, 0x7BFF, 65504},
		{StorageFloat16, 65519, 0x7BFF, 65504}, // below the halfway point to 65536
		{StorageFloat16, 65520, 0x7C00, inf},   // halfway rounds to even: Inf
		{StorageFloat16, -65520, 0xFC00, -inf},
		{StorageFloat16, 1e6, 0x7C00, inf},
		{StorageFloat16, 1e-7, 0x0002, 1.1920929e-07}, // subnormal
		{StorageFloat16, 5.9604645e-08, 0x0001, 5.9604645e-08},
		{StorageFloat16, 2.9802322e-08, 0x0000, 0}, // half the smallest subnormal: tie to even 0
		{StorageFloat16, 6.1035156e-05, 0x0400, 6.1035156e-05},
		{StorageFloat16, negZero, 0x8000, negZero},
		{StorageFloat16, inf, 0x7C00, inf},
		{StorageFloat16, -inf, 0xFC00, -inf},
		{StorageFloat16, 2049, 0x6800, 2048}, // tie between 2048 and 2050: even
		{StorageFloat16, 2051, 0x6802, 2052}, // tie between 2050 and 2052: even

		{StorageBFloat16, 1, 0x3F80, 1},
		{StorageBFloat16, -2.5, 0xC020, -2.5},
		{StorageBFloat16, 0.1, 0x3DCD, 0.10009765625},
		{StorageBFloat16, math.Float32frombits(0x3F808000), 0x3F80, 1},         // tie: down to even
		{StorageBFloat16, math.Float32frombits(0x3F818000), 0x3F82, 1.015625},  // tie: up to even
		{StorageBFloat16, math.Float32frombits(0x3F808001), 0x3F81, 1.0078125}, // above the tie
		{StorageBFloat16, 3.39e38, 0x7F7F, 3.3895314e38},                       // the largest finite bfloat16
		// 3.4e38 lies above the midpoint (3.3961776e38) between the largest
		// finite bfloat16 and 2^128: round to nearest even gives Inf.
		{StorageBFloat16, 3.4e38, 0x7F80, inf},
		{StorageBFloat16, math.MaxFloat32, 0x7F80, inf}, // above the last midpoint
		{StorageBFloat16, 65520, 0x4780, 65536},
		{StorageBFloat16, negZero, 0x8000, negZero},
		{StorageBFloat16, inf, 0x7F80, inf},
		{StorageBFloat16, -inf, 0xFF80, -inf},
		{StorageBFloat16, 1e-40, 0x0001, float32(math.Ldexp(1, -133))}, // float32 subnormal
	}
	for _, c := range cases {
		var h [1]uint16
		Narrow(h[:], []float32{c.in}, c.s)
		if h[0] != c.bits {
			t.Errorf("%v Narrow(%g) = %#04x, want %#04x", c.s, c.in, h[0], c.bits)
		}
		var f [1]float32
		Widen(f[:], []uint16{c.bits}, c.s)
		if math.Float32bits(f[0]) != math.Float32bits(c.back) {
			t.Errorf("%v Widen(%#04x) = %g, want %g", c.s, c.bits, f[0], c.back)
		}
	}
}

func TestNaNStaysNaN(t *testing.T) {
	nans := []float32{
		float32(math.NaN()),
		math.Float32frombits(0x7F800001), // signalling, payload only in the low bits
		math.Float32frombits(0xFFFFFFFF),
		math.Float32frombits(0x7FFFFFFF), // would round into the exponent
	}
	for _, s := range []Storage{StorageFloat16, StorageBFloat16} {
		h := make([]uint16, len(nans))
		Narrow(h, nans, s)
		back := make([]float32, len(h))
		Widen(back, h, s)
		for i, v := range back {
			if v == v {
				t.Errorf("%v: NaN %#08x narrowed to %#04x, widened to %g", s, math.Float32bits(nans[i]), h[i], v)
			}
			quiet := uint16(0x0040)
			if s == StorageFloat16 {
				quiet = 0x0200
			}
			if h[i]&quiet == 0 {
				t.Errorf("%v: NaN %#08x narrowed to %#04x, not a quiet NaN", s, math.Float32bits(nans[i]), h[i])
			}
		}
	}
}

// Every 16-bit value but NaN widens to a float32 that narrows back to it.
func TestRoundTripExhaustive(t *testing.T) {
	for _, s := range []Storage{StorageFloat16, StorageBFloat16} {
		all := make([]uint16, 1<<16)
		for i := range all {
			all[i] = uint16(i)
		}
		f := make([]float32, len(all))
		Widen(f, all, s)
		back := make([]uint16, len(all))
		Narrow(back, f, s)
		bad := 0
		for i, v := range f {
			if v != v {
				continue
			}
			if back[i] != all[i] {
				if bad++; bad <= 5 {
					t.Errorf("%v: %#04x -> %g -> %#04x", s, all[i], v, back[i])
				}
			}
		}
		if bad > 5 {
			t.Errorf("%v: %d values did not survive the round trip", s, bad)
		}
	}
}

// Narrowing writes only len(src) values, however long dst is.
func TestNarrowLengths(t *testing.T) {
	dst := []uint16{9, 9, 9}
	Narrow(dst, []float32{1, 2}, StorageBFloat16)
	if dst[0] != 0x3F80 || dst[1] != 0x4000 || dst[2] != 9 {
		t.Errorf("Narrow into a longer dst: %#04x", dst)
	}
	wide := []float32{7, 7, 7}
	Widen(wide, []uint16{0x3C00}, StorageFloat16)
	if wide[0] != 1 || wide[1] != 7 {
		t.Errorf("Widen into a longer dst: %v", wide)
	}
}

func BenchmarkNarrowFloat16(b *testing.B) { benchNarrow(b, StorageFloat16) }

func BenchmarkNarrowBFloat16(b *testing.B) { benchNarrow(b, StorageBFloat16) }

func benchNarrow(b *testing.B, s Storage) {
	src := make([]float32, 1<<16)
	for i := range src {
		src[i] = float32(i) * 0.37
	}
	dst := make([]uint16, len(src))
	b.SetBytes(int64(4 * len(src)))
	for b.Loop() {
		Narrow(dst, src, s)
	}
}

func BenchmarkWidenFloat16(b *testing.B) {
	src := make([]uint16, 1<<16)
	for i := range src {
		src[i] = uint16(i)
	}
	dst := make([]float32, len(src))
	b.SetBytes(int64(2 * len(src)))
	for b.Loop() {
		Widen(dst, src, StorageFloat16)
	}
}
