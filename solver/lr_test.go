package solver

import (
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// learningRate is the rate of p's policy at iter.
func learningRate(p *caffepb.SolverParameter, iter int, step *int) float64 {
	pol, err := policyOf(p)
	if err != nil {
		panic(err)
	}
	return pol.Rate(p, iter, step)
}

func TestLearningRatePolicies(t *testing.T) {
	base := func(policy string) *caffepb.SolverParameter {
		return &caffepb.SolverParameter{BaseLr: proto.Float32(0.1), LrPolicy: proto.String(policy), Gamma: proto.Float32(0.5),
			Power: proto.Float32(0.75), Stepsize: proto.Int32(10), MaxIter: proto.Int32(100), Stepvalue: []int32{5, 20, 40}}
	}
	for _, it := range []int{0, 1, 9, 10, 25, 99} {
		lr := float64(float32(0.1))
		g, pw := 0.5, float64(float32(0.75))
		want := map[string]float64{
			"fixed":   lr,
			"step":    lr * math.Pow(g, float64(it/10)),
			"exp":     lr * math.Pow(g, float64(it)),
			"inv":     lr * math.Pow(1+g*float64(it), -pw),
			"poly":    lr * math.Pow(1-float64(it)/100, pw),
			"sigmoid": lr / (1 + math.Exp(-g*float64(it-10))),
		}
		for policy, w := range want {
			step := 0
			if got := learningRate(base(policy), it, &step); math.Abs(got-w) > 1e-12 {
				t.Errorf("%s at %d: %v, want %v", policy, it, got, w)
			}
		}
	}
	// multistep advances one step per call once the iteration passes a
	// step value, as Caffe does.
	p, step := base("multistep"), 0
	for it := 0; it <= 45; it++ {
		got := learningRate(p, it, &step)
		wantStep := 0
		for _, sv := range []int{5, 20, 40} {
			if it >= sv {
				wantStep++
			}
		}
		if step != wantStep || math.Abs(got-float64(float32(0.1))*math.Pow(0.5, float64(wantStep))) > 1e-12 {
			t.Fatalf("multistep at %d: step %d rate %v, want step %d", it, step, got, wantStep)
		}
	}
}
