package solver_test

import (
	"fmt"
	"log"
	"log/slog"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/device"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
	"github.com/gocaffe/gocaffe/solver"
)

// signSGD is a solver type of one's own: every weight moves by the
// learning rate against the sign of its gradient. It keeps no history.
type signSGD[T blob.Float] struct{}

func newSignSGD[T blob.Float](*caffepb.SolverParameter, *device.Context) (solver.Rule[T], error) {
	return signSGD[T]{}, nil
}

func (signSGD[T]) Histories() int { return 0 }

func (signSGD[T]) Update(u *solver.ParamUpdate[T]) error {
	g := u.Param.MutableCPUDiff() // on a GPU context too: the data moves
	for i, v := range g {
		switch {
		case v > 0:
			g[i] = u.Rate
		case v < 0:
			g[i] = -u.Rate
		}
	}
	return nil
}

// Registered, the type is a solver prototxt's `type: "SignSGD"`.
func init() {
	if err := solver.Register("SignSGD", newSignSGD[float32], newSignSGD[float64]); err != nil {
		log.Fatal(err)
	}
}

// Train with a solver type of one's own, and look at the gradients before
// every update.
func ExampleRegister() {
	var p caffepb.SolverParameter
	err := protoio.ParseText([]byte(`type: "SignSGD" base_lr: 0.01 lr_policy: "fixed"
max_iter: 200 random_seed: 1701 snapshot_after_train: false
net_param {
  layer { name: "x" type: "DummyData" top: "x"
    dummy_data_param { shape { dim: 16 dim: 8 } data_filler { type: "gaussian" } } }
  layer { name: "teacher" type: "InnerProduct" bottom: "x" top: "target" param { lr_mult: 0 } param { lr_mult: 0 }
    inner_product_param { num_output: 2 weight_filler { type: "uniform" min: -1 max: 1 } } }
  layer { name: "student" type: "InnerProduct" bottom: "x" top: "guess" inner_product_param { num_output: 2 } }
  layer { name: "loss" type: "EuclideanLoss" bottom: "guess" bottom: "target" top: "loss" }
}`), &p)
	if err != nil {
		log.Fatal(err)
	}
	s, err := solver.New[float32](&p, solver.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	var first, last float32
	s.OnGradientsReady(func(s *solver.Solver[float32]) error {
		var sum float32
		for p := range s.Net().Graph().LearnableParams() { // allocates nothing
			sum += p.Blob().SumsqDiff()
		}
		if s.Iter() == 0 {
			first = sum
		}
		last = sum
		return nil
	})
	if err := s.Solve(""); err != nil {
		log.Fatal(err)
	}
	fmt.Println("gradients shrank:", last < first/10)
	// Output: gradients shrank: true
}
