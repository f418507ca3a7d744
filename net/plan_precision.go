package net

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unsafe"

	"github.com/gocaffe/gocaffe/internal/logf"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// precisionAsked is what NVCaffe 0.17's fields ask of one layer: the type
// its blobs are stored in and the type its math runs in, forward and
// backward. A layer's own forward_type (and the others) wins over the
// net's default_forward_type; unset, both are FLOAT.
type precisionAsked struct {
	forward, backward, forwardMath, backwardMath caffepb.Type
}

// askedPrecision resolves NVCaffe's precision fields for one layer, as
// NVCaffe does: a field the layer sets, else the net's default.
func askedPrecision(p *caffepb.NetParameter, lp *caffepb.LayerParameter) precisionAsked {
	pick := func(own *caffepb.Type, net caffepb.Type) caffepb.Type {
		if own != nil {
			return *own
		}
		return net
	}
	return precisionAsked{
		forward:      pick(lp.ForwardType, p.GetDefaultForwardType()),
		backward:     pick(lp.BackwardType, p.GetDefaultBackwardType()),
		forwardMath:  pick(lp.ForwardMath, p.GetDefaultForwardMath()),
		backwardMath: pick(lp.BackwardMath, p.GetDefaultBackwardMath()),
	}
}

// reduced reports whether the layer asks for anything narrower than FLOAT.
func (a precisionAsked) reduced() bool {
	for _, t := range []caffepb.Type{a.forward, a.backward, a.forwardMath, a.backwardMath} {
		if t != caffepb.Type_FLOAT && t != caffepb.Type_DOUBLE {
			return true
		}
	}
	return false
}

// String writes what was asked the way NVCaffe's fields read:
// "FLOAT16/FLOAT16, math FLOAT/FLOAT", forward then backward.
func (a precisionAsked) String() string {
	s := a.forward.String() + "/" + a.backward.String()
	if a.forwardMath != a.forward || a.backwardMath != a.backward {
		s += fmt.Sprintf(", math %v/%v", a.forwardMath, a.backwardMath)
	}
	return s
}

// precisionRan names the precision gocaffe computes a layer in: the net's
// element type, with TF32 products where the device allows them.
func (n *Net[T]) precisionRan(onGPU bool) string {
	var zero T
	if unsafe.Sizeof(zero) == 8 {
		return "FP64"
	}
	if onGPU && n.ctx.TF32() {
		return "TF32"
	}
	return "FP32"
}

// planPrecision records, per layer, the precision it runs in and what
// NVCaffe's fields asked of it, and the loss scaling they ask for. Reduced-precision storage (FLOAT16, and
// bf16) is not built yet: a net that asks for it runs in FP32 and the
// pass says so, as does a warning at build time, rather than the fields
// being dropped without a word.
func (n *Net[T]) planPrecision() string {
	ran := map[string]int{}
	asked := map[string]int{}
	for i := range n.layers {
		l := &n.plan.Layers[i]
		l.Precision = n.precisionRan(l.Engine != "host")
		ran[l.Precision]++
		if a := n.layers[i].precision; a.reduced() {
			l.Asked = a.String()
			asked[l.Asked]++
		}
	}
	summary := "every layer in " + countsOf(ran)
	if len(asked) > 0 {
		summary += fmt.Sprintf("; NVCaffe's fields ask %s; they run in %s: reduced-precision storage is not built (docs/forks.md)", countsOf(asked), n.precisionRan(n.ctx.OnGPU()))
	}
	if n.gradScale != 1 || n.gradScaleAdaptive {
		// The fields are a solver's to apply (package solver's LossScale
		// option, which may override them).
		how := "static"
		if n.gradScaleAdaptive {
			// NVCaffe divides K by the largest FLOAT16 gradient (times
			// 1/4); every gradient is FP32 here, so K it stays.
			how = fmt.Sprintf("adaptive, %g while no gradient is FLOAT16", n.gradScale)
		}
		summary += fmt.Sprintf("; global_grad_scale %g (%s loss scaling): applied by a solver training the net", n.gradScale, how)
	}
	return summary
}

// countsOf writes a count per key: "FP32 (12 layers)", or
// "FLOAT/FLOAT16 (1 layer), FLOAT16/FLOAT16 (3 layers)".
func countsOf(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d %s)", k, m[k], plural(m[k], "layer"))
	}
	return strings.Join(parts, ", ")
}

// warnReducedPrecision logs, once per net, that NVCaffe's precision fields
// asked for a precision gocaffe does not store blobs in yet.
func (n *Net[T]) warnReducedPrecision() {
	var names []string
	for _, r := range n.layers {
		if r.precision.reduced() {
			names = append(names, r.name)
		}
	}
	if len(names) == 0 {
		return
	}
	which := "layer " + names[0]
	if len(names) > 1 {
		which = fmt.Sprintf("%d layers (%s first)", len(names), names[0])
	}
	logf.Warnf(n.log, "Net %q: NVCaffe's precision fields ask for reduced precision in %s; gocaffe stores blobs in FP32 only, so they run in %s (the precision column of `gocaffe time -plan` shows each layer)",
		n.name, which, n.precisionRan(n.ctx.OnGPU()))
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
