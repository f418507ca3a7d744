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

// apply distorts c planes of n pixels in place.
func (d *distortPlan) apply(pix []byte, c, n int) {
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
			var planes [3][]byte
			for k := range 3 {
				planes[k] = append([]byte(nil), pix[s.perm[k]*n:(s.perm[k]+1)*n]...)
			}
			for k := range 3 {
				copy(pix[k*n:], planes[k])
			}
		}
	}
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

// bgrToHSV is OpenCV's 8-bit BGR2HSV.
func bgrToHSV(b, g, r byte) (h, s, v byte) {
	hi, lo := max(b, g, r), min(b, g, r)
	diff := float64(hi) - float64(lo)
	if hi == 0 {
		return 0, 0, 0
	}
	s = byte(math.RoundToEven(diff * 255 / float64(hi)))
	if diff == 0 {
		return 0, s, hi
	}
	var deg float64
	switch hi {
	case r:
		deg = 60 * (float64(g) - float64(b)) / diff
	case g:
		deg = 120 + 60*(float64(b)-float64(r))/diff
	default:
		deg = 240 + 60*(float64(r)-float64(g))/diff
	}
	if deg < 0 {
		deg += 360
	}
	return byte(math.RoundToEven(deg / 2)), s, hi
}

// hsvToBGR is OpenCV's 8-bit HSV2BGR; hues past 179 wrap around.
func hsvToBGR(h, s, v byte) (b, g, r byte) {
	fv := float64(v) / 255
	if s == 0 {
		return v, v, v
	}
	fs := float64(s) / 255
	hh := math.Mod(float64(h)/30, 6)
	sector := math.Floor(hh)
	f := hh - sector
	p, q, t := fv*(1-fs), fv*(1-fs*f), fv*(1-fs*(1-f))
	var fr, fg, fb float64
	switch int(sector) {
	case 0:
		fr, fg, fb = fv, t, p
	case 1:
		fr, fg, fb = q, fv, p
	case 2:
		fr, fg, fb = p, fv, t
	case 3:
		fr, fg, fb = p, q, fv
	case 4:
		fr, fg, fb = t, p, fv
	default:
		fr, fg, fb = fv, p, q
	}
	return saturateByte(float32(fb * 255)), saturateByte(float32(fg * 255)), saturateByte(float32(fr * 255))
}
