package data

import "math"

// SSD's photometric distortions (its im_transforms' ApplyDistort) on
// planar B, G, R bytes. Each result is rounded half to even and clamped to
// a byte, as OpenCV's convertTo; saturation and hue go through OpenCV's
// 8-bit HSV (H in 0..179 for 0..358 degrees, S and V in 0..255).

type distortKind uint8

const (
	distortBrightness distortKind = iota // add v
	distortContrast                      // multiply by v
	distortSaturation                    // multiply S by v
	distortHue                           // add v to H
	distortOrder                         // reorder the channels by perm
)

type distortStep struct {
	kind distortKind
	v    float32
	perm [3]int
}

// distortPlan is the distortions drawn for one image, in order.
type distortPlan struct {
	steps [5]distortStep
	n     int
}

func (d *distortPlan) add(s distortStep) { d.steps[d.n] = s; d.n++ }

// planDistort draws SSD's distortions: a coin picks the order (contrast
// before or after saturation and hue), then each distortion happens with
// its probability and draws its amount. Saturation, hue and channel order
// need colour; a grey image skips them without drawing.
func (a *Augmenter[T]) planDistort(c int, d *distortPlan) {
	p := a.distort
	contrastFirst := a.uniform(0, 1) > 0.5
	brightness := func() {
		if a.uniform(0, 1) < p.GetBrightnessProb() {
			if v := a.uniform(-p.GetBrightnessDelta(), p.GetBrightnessDelta()); v != 0 {
				d.add(distortStep{kind: distortBrightness, v: v})
			}
		}
	}
	contrast := func() {
		if a.uniform(0, 1) < p.GetContrastProb() {
			if v := a.uniform(p.GetContrastLower(), p.GetContrastUpper()); math.Abs(float64(v)-1) > 1e-3 {
				d.add(distortStep{kind: distortContrast, v: v})
			}
		}
	}
	colour := func() {
		if c != 3 {
			return
		}
		if a.uniform(0, 1) < p.GetSaturationProb() {
			// SSD tests fabs(delta - 1) != 1e-3, true for any draw.
			d.add(distortStep{kind: distortSaturation, v: a.uniform(p.GetSaturationLower(), p.GetSaturationUpper())})
		}
		if a.uniform(0, 1) < p.GetHueProb() {
			if v := a.uniform(-p.GetHueDelta(), p.GetHueDelta()); v != 0 {
				d.add(distortStep{kind: distortHue, v: v})
			}
		}
	}
	brightness()
	if contrastFirst {
		contrast()
		colour()
	} else {
		colour()
		contrast()
	}
	if c == 3 && a.uniform(0, 1) < p.GetRandomOrderProb() {
		s := distortStep{kind: distortOrder, perm: [3]int{0, 1, 2}}
		for i := 2; i > 0; i-- {
			j := a.tf.rng.IntN(i + 1)
			s.perm[i], s.perm[j] = s.perm[j], s.perm[i]
		}
		d.add(s)
	}
}

// apply distorts c planes of n pixels in place; tmp is scratch for the
// channel reordering, grown as needed and returned.
func (d *distortPlan) apply(pix []byte, c, n int, tmp []byte) []byte {
	for _, s := range d.steps[:d.n] {
		switch s.kind {
		case distortBrightness:
			for i, v := range pix {
				pix[i] = saturateByte(float32(v) + s.v)
			}
		case distortContrast:
			for i, v := range pix {
				pix[i] = saturateByte(float32(v) * s.v)
			}
		case distortSaturation, distortHue:
			adjustHSV(pix[:n], pix[n:2*n], pix[2*n:3*n], s)
		case distortOrder:
			tmp = append(tmp[:0], pix[:3*n]...)
			for k := range 3 {
				copy(pix[k*n:(k+1)*n], tmp[s.perm[k]*n:])
			}
		}
	}
	return tmp
}

// adjustHSV converts each pixel to 8-bit HSV, scales S or shifts H, and
// converts back.
func adjustHSV(bs, gs, rs []byte, s distortStep) {
	for i := range bs {
		h, sat, v := bgrToHSV(bs[i], gs[i], rs[i])
		if s.kind == distortSaturation {
			sat = saturateByte(float32(sat) * s.v)
		} else {
			h = saturateByte(float32(h) + s.v)
		}
		bs[i], gs[i], rs[i] = hsvToBGR(h, sat, v)
	}
}

// OpenCV's 8-bit HSV tables (hsv_shift 12): 255/v and 180/(6 diff) in
// fixed point, rounded.
var sdivTable, hdivTable = func() (s, h [256]int32) {
	for i := 1; i < 256; i++ {
		s[i] = int32(math.RoundToEven(float64(255<<12) / float64(i)))
		h[i] = int32(math.RoundToEven(float64(180<<12) / (6 * float64(i))))
	}
	return s, h
}()

// bgrToHSV is OpenCV's 8-bit BGR2HSV, in its fixed-point arithmetic.
func bgrToHSV(b, g, r byte) (h, s, v byte) {
	vi, lo := int32(max(b, g, r)), int32(min(b, g, r))
	bi, gi, ri := int32(b), int32(g), int32(r)
	diff := vi - lo
	si := (diff*sdivTable[vi] + 1<<11) >> 12
	var hi int32
	switch vi {
	case ri:
		hi = gi - bi
	case gi:
		hi = bi - ri + 2*diff
	default:
		hi = ri - gi + 4*diff
	}
	hi = (hi*hdivTable[diff] + 1<<11) >> 12
	if hi < 0 {
		hi += 180
	}
	return byte(hi), byte(si), byte(vi)
}

// hsvToBGR is OpenCV's 8-bit HSV2BGR: float32 arithmetic on S and V
// scaled to 0..1, H to sectors of 30 (hues past 179 wrap around), the
// results scaled back to bytes. OpenCV's own paths disagree on that last
// step: its vectorised loop, which converts all but the last few pixels
// of a row, truncates (OpenCV 4.6: data/opencv_test.go), its scalar loop
// rounds; this truncates, as the vectorised loop does.
func hsvToBGR(h, s, v byte) (b, g, r byte) {
	const hscale = float32(6) / 180
	fv := float32(v) * (1 / float32(255))
	toByte := func(x float32) byte { return byte(max(0, min(255, x*255))) }
	if s == 0 {
		x := toByte(fv)
		return x, x, x
	}
	fs := float32(s) * (1 / float32(255))
	fh := float32(h) * hscale
	for fh >= 6 {
		fh -= 6
	}
	sector := int(math.Floor(float64(fh)))
	fh -= float32(sector)
	if sector < 0 || sector >= 6 {
		sector, fh = 0, 0
	}
	// 1 - s*h fused (OpenCV's build contracts it into one multiply-add): the
	// product of two float32 is exact in float64.
	fused := func(a, b float32) float32 { return float32(1 - float64(a)*float64(b)) }
	tab := [4]float32{fv, fv * (1 - fs), fv * fused(fs, fh), fv * fused(fs, 1-fh)}
	order := [6][3]int{{1, 3, 0}, {1, 0, 2}, {3, 0, 1}, {0, 2, 1}, {0, 1, 3}, {2, 1, 0}}[sector]
	return toByte(tab[order[0]]), toByte(tab[order[1]]), toByte(tab[order[2]])
}
