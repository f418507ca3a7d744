package solver

import (
	"errors"
	"fmt"
	"math"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/cuda"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/internal/logf"
)

// LossScaleMode says how a solver scales the loss (LossScale.Mode).
type LossScaleMode int

// The modes of loss scaling.
const (
	// LossScaleFromNet, the zero value, does what NVCaffe's fields of the
	// train net ask: global_grad_scale K, static, or adaptive with
	// global_grad_scale_adaptive; nothing when K is 1 and not adaptive.
	LossScaleFromNet LossScaleMode = iota
	// LossScaleOff scales nothing, whatever the net's fields ask.
	LossScaleOff
	// LossScaleStatic multiplies the loss's gradient by Scale in every
	// iteration (NVCaffe's global_grad_scale). Gradients that overflow
	// are not looked for: they make the weights, then the loss, infinite
	// or NaN, and Step stops on the loss.
	LossScaleStatic
	// LossScaleAdaptive is NVCaffe's global_grad_scale_adaptive: each
	// iteration's scale is Scale·4/m, m the largest magnitude among the
	// previous iteration's FLOAT16 gradients (after unscaling and the
	// iter_size normalisation; infinities and NaNs ignored), and Scale
	// when there are none, or all are zero. gocaffe keeps every gradient
	// in FP32 (FP64), so it is Scale in every iteration, as in NVCaffe
	// for FLOAT gradients.
	LossScaleAdaptive
	// LossScaleDynamic is PyTorch's GradScaler: the scale starts at Scale;
	// an iteration whose gradients hold an infinity or a NaN after
	// unscaling applies no update (the weights and the solver's history
	// stay, the iteration still counts) and multiplies the scale by
	// Backoff, logging so; GrowthInterval iterations in a row without one
	// multiply it by Growth.
	LossScaleDynamic
)

// String names the mode as the command's -loss_scale flag does.
func (m LossScaleMode) String() string {
	switch m {
	case LossScaleFromNet:
		return "net"
	case LossScaleOff:
		return "off"
	case LossScaleStatic:
		return "static"
	case LossScaleAdaptive:
		return "adaptive"
	case LossScaleDynamic:
		return "dynamic"
	}
	return fmt.Sprintf("LossScaleMode(%d)", int(m))
}

// LossScale configures loss scaling (Options.LossScale): the loss's
// gradient is multiplied by a scale S before the backward pass
// (net.Net.SetLossScale), so that gradients too small for reduced
// precision stay representable, and the parameters' gradients are divided
// by S after the OnGradientsReady hooks (which see them scaled, as a
// data-parallel reduction should) and before clipping, the iter_size
// normalisation, weight decay and the update, which see the true
// gradients. In FP32 a power of two changes no bit of the update unless a
// value of the backward pass overflows or is subnormal, with or without
// the scale. Zero fields take their defaults.
type LossScale struct {
	Mode LossScaleMode
	// Scale is the static and adaptive modes' K (required) and the
	// dynamic mode's first scale (default 65536, PyTorch's).
	Scale float64
	// GrowthInterval, Growth and Backoff drive the dynamic mode: the
	// scale is multiplied by Growth (default 2) after GrowthInterval
	// (default 2000) iterations in a row without overflow, and by Backoff
	// (default 0.5) at each overflow.
	GrowthInterval int
	Growth         float64
	Backoff        float64
	// MaxSkips stops training with an error after that many updates in a
	// row skipped for overflow (default 50; negative: never): gradients
	// that overflow whatever the scale (a layer's backward pass dividing
	// by zero) would otherwise shrink it towards zero while nothing
	// trains.
	MaxSkips int
}

// lossScaler is a solver's loss scaling as it runs.
type lossScaler[T blob.Float] struct {
	cfg      LossScale // resolved: Mode is Off, Static, Adaptive or Dynamic, defaults filled
	scale    float64   // this iteration's S
	clean    int       // dynamic: iterations in a row without overflow
	skips    int       // dynamic: updates in a row skipped
	skipped  int       // dynamic: updates skipped in the run
	unscaler gradUnscaler[T]
	params   []*blob.Blob[T]
	all      []bool // every parameter, which the dynamic mode measures
	// reduced marks the learnable parameters whose gradients are stored
	// in reduced precision, those the adaptive mode measures: none until
	// gocaffe stores blobs in FLOAT16 (nil means none).
	reduced []bool
}

// gradUnscaler divides the learnable gradients by the loss scale and
// measures them, once per iteration. It is the one point of an iteration
// at which loss scaling reads a result back, and it returns one number, so
// a device's implementation can unscale every blob and reduce their
// magnitudes on the device and read a single word per iteration.
type gradUnscaler[T blob.Float] interface {
	// unscale multiplies the diff of every blob of params by inv (nothing
	// when inv is 1) and returns the largest magnitude of the unscaled
	// diffs of the blobs measure marks (nil: none, and 0 is returned),
	// +Inf or NaN when one of them holds an infinity or a NaN.
	unscale(params []*blob.Blob[T], inv T, measure []bool) (float64, error)
}

// viewUnscaler is the gradUnscaler of a device's View: the scaling on the
// device, the measure on the host. On a GPU the measure copies each diff
// it reads to the host, a wait per blob, which a reduction on the device
// is to replace (only the dynamic mode measures every iteration).
type viewUnscaler[T blob.Float, A any] struct{ v device.View[T, A] }

func (u viewUnscaler[T, A]) unscale(params []*blob.Blob[T], inv T, measure []bool) (float64, error) {
	u.v.ResetErr()
	if inv != 1 {
		for _, p := range params {
			u.v.Scal(p.Count(), inv, u.v.MutableDiff(p))
		}
	}
	if err := u.v.Err(); err != nil {
		return 0, err
	}
	var m T
	for i, p := range params {
		if measure == nil || !measure[i] {
			continue
		}
		for _, x := range p.CPUDiff() {
			m = max(m, abs(x)) // max is NaN if either is
		}
	}
	return float64(m), nil
}

func abs[T blob.Float](x T) T {
	if x < 0 {
		return -x
	}
	return x
}

// The defaults of LossScale's fields.
const (
	defaultDynamicScale   = 65536
	defaultGrowthInterval = 2000
	defaultGrowth         = 2
	defaultBackoff        = 0.5
	defaultMaxSkips       = 50
)

// resolve fills in the defaults and the net's fields (global_grad_scale,
// global_grad_scale_adaptive) and checks the result.
func (c LossScale) resolve(netScale float32, netAdaptive bool) (LossScale, error) {
	if c.Mode == LossScaleFromNet {
		c = LossScale{Mode: LossScaleOff}
		switch {
		case netAdaptive:
			c = LossScale{Mode: LossScaleAdaptive, Scale: float64(netScale)}
		case netScale != 1:
			c = LossScale{Mode: LossScaleStatic, Scale: float64(netScale)}
		}
		if c.Mode != LossScaleOff && !(netScale > 0) {
			// NVCaffe's comments say "if positive"; a scale of zero or
			// less would zero or flip every gradient.
			return c, fmt.Errorf("global_grad_scale %v: loss scaling needs a positive scale", netScale)
		}
	}
	switch c.Mode {
	case LossScaleOff:
		c.Scale = 1
		return c, nil
	case LossScaleStatic, LossScaleAdaptive:
		if !(c.Scale > 0) || math.IsInf(c.Scale, 0) {
			return c, fmt.Errorf("%v loss scaling needs a positive, finite scale, got %v", c.Mode, c.Scale)
		}
		return c, nil
	case LossScaleDynamic:
	default:
		return c, fmt.Errorf("unknown loss scale mode %v", c.Mode)
	}
	if c.Scale == 0 {
		c.Scale = defaultDynamicScale
	}
	if c.GrowthInterval == 0 {
		c.GrowthInterval = defaultGrowthInterval
	}
	if c.Growth == 0 {
		c.Growth = defaultGrowth
	}
	if c.Backoff == 0 {
		c.Backoff = defaultBackoff
	}
	if c.MaxSkips == 0 {
		c.MaxSkips = defaultMaxSkips
	}
	switch {
	case !(c.Scale > 0) || math.IsInf(c.Scale, 0):
		return c, fmt.Errorf("dynamic loss scaling: the first scale must be positive and finite, got %v", c.Scale)
	case c.GrowthInterval < 0:
		return c, fmt.Errorf("dynamic loss scaling: growth interval %d is negative", c.GrowthInterval)
	case !(c.Growth >= 1) || math.IsInf(c.Growth, 0):
		return c, fmt.Errorf("dynamic loss scaling: growth factor %v must be at least 1", c.Growth)
	case !(c.Backoff > 0 && c.Backoff < 1):
		return c, fmt.Errorf("dynamic loss scaling: backoff factor %v must lie between 0 and 1", c.Backoff)
	}
	return c, nil
}

// initLossScale sets the solver's loss scaling up from its options and the
// train net's fields, and gives the net its first scale.
func (s *Solver[T]) initLossScale(opts LossScale) error {
	netScale, netAdaptive := s.net.GlobalGradScale()
	cfg, err := opts.resolve(netScale, netAdaptive)
	if err != nil {
		return fmt.Errorf("loss scaling: %w", err)
	}
	ls := &s.lossScale
	ls.cfg, ls.scale, ls.params = cfg, cfg.Scale, s.net.LearnableParams()
	if cfg.Mode == LossScaleOff {
		return nil
	}
	ls.all = make([]bool, len(ls.params))
	for i := range ls.all {
		ls.all[i] = true
	}
	ls.unscaler = viewUnscaler[T, []T]{device.Host[T](s.ctx)}
	if s.ctx.OnGPU() {
		v, err := device.NewGPUView[T](s.ctx)
		if err != nil {
			return fmt.Errorf("loss scaling: %w", err)
		}
		ls.unscaler = viewUnscaler[T, cuda.DevicePtr]{v}
	}
	if s.Root() {
		logf.Infof(s.log, "Loss scaling: %s", cfg.describe())
	}
	return s.net.SetLossScale(ls.scale)
}

// describe says what the loss scaling does, for the log.
func (c LossScale) describe() string {
	switch c.Mode {
	case LossScaleStatic:
		return fmt.Sprintf("static, scale %g", c.Scale)
	case LossScaleAdaptive:
		return fmt.Sprintf("adaptive (NVCaffe's global_grad_scale_adaptive), K = %g; every gradient is FP32, so the scale stays K", c.Scale)
	case LossScaleDynamic:
		return fmt.Sprintf("dynamic, scale %g, times %g after %d iterations without overflow, times %g at each overflow, whose update is skipped", c.Scale, c.Growth, c.GrowthInterval, c.Backoff)
	}
	return "off"
}

// LossScale returns the scale the loss's gradient is multiplied by in the
// next iteration: 1 without loss scaling (Options.LossScale).
func (s *Solver[T]) LossScale() float64 { return s.lossScale.scale }

// SkippedUpdates returns how many updates dynamic loss scaling has skipped
// for overflow since the solver was made.
func (s *Solver[T]) SkippedUpdates() int { return s.lossScale.skipped }

// errTooManySkips stops training whose gradients overflow whatever the
// scale.
var errTooManySkips = errors.New("loss scaling")

// unscaleGradients divides the gradients by the iteration's loss scale and
// reports whether the update goes ahead (false: dynamic scaling found an
// overflow and skips it), choosing the next iteration's scale.
func (s *Solver[T]) unscaleGradients() (bool, error) {
	ls := &s.lossScale
	if ls.cfg.Mode == LossScaleOff {
		return true, nil
	}
	var measure []bool
	switch ls.cfg.Mode {
	case LossScaleDynamic:
		measure = ls.all
	case LossScaleAdaptive:
		measure = ls.reduced
	}
	amax, err := ls.unscaler.unscale(ls.params, T(1/ls.scale), measure)
	if err != nil {
		return false, err
	}
	apply := true
	next := ls.scale
	switch ls.cfg.Mode {
	case LossScaleAdaptive:
		// NVCaffe measures after the iter_size normalisation.
		m := amax / float64(s.param.GetIterSize())
		next = ls.cfg.Scale
		if m > 0 && !math.IsInf(m, 0) { // NaN fails m > 0
			next = ls.cfg.Scale * 4 / m
		}
		if math.IsInf(float64(T(next)), 0) { // m below T's range over 4K
			next = ls.cfg.Scale
		}
	case LossScaleDynamic:
		if math.IsInf(amax, 0) || math.IsNaN(amax) {
			apply = false
			ls.clean = 0
			ls.skips++
			ls.skipped++
			next = ls.scale * ls.cfg.Backoff
			if s.Root() { // every rank of a job skips alike: their gradients are one mean
				logf.Infof(s.log, "Iteration %d: gradients overflowed (inf or NaN) at loss scale %s; skipping the update, loss scale now %s", s.iter, num(ls.scale), num(next))
			}
			if ls.cfg.MaxSkips > 0 && ls.skips >= ls.cfg.MaxSkips {
				return false, fmt.Errorf("%w: %d updates in a row skipped for overflowing gradients, the scale down to %g: the gradients are not finite at any scale (check the layers' backward passes and the data)", errTooManySkips, ls.skips, next)
			}
			break
		}
		ls.skips = 0
		if ls.clean++; ls.cfg.GrowthInterval > 0 && ls.clean >= ls.cfg.GrowthInterval {
			ls.clean = 0
			next = ls.scale * ls.cfg.Growth
			if T(next) == 0 || math.IsInf(float64(T(next)), 0) {
				next = ls.scale // as far as the type goes
			} else if next != ls.scale && s.Root() {
				logf.Infof(s.log, "Iteration %d: %d iterations without overflow; loss scale now %s", s.iter, ls.cfg.GrowthInterval, num(next))
			}
		}
	}
	if next != ls.scale {
		if err := s.net.SetLossScale(next); err != nil {
			return false, err
		}
		ls.scale = next
	}
	return apply, nil
}
