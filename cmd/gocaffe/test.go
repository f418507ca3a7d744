package main

import (
	"fmt"
	"io"

	"github.com/gocaffe/gocaffe/internal/glog"
	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// runTest scores a trained model (Caffe's `caffe test`): it runs the net's
// TEST phase forward -iterations times and prints each output's mean.
func runTest(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("test", stderr)
	model := fs.String("model", "", "the model definition protocol buffer text file")
	weights := fs.String("weights", "", "the trained weights: comma-separated .caffemodel files")
	iterations := fs.Int("iterations", 50, "the number of iterations to run")
	var nf netFlags
	nf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	stopProfile, err := nf.startProfile()
	if err != nil {
		return err
	}
	defer stopProfile()
	if *model == "" || *weights == "" {
		fs.Usage()
		return fmt.Errorf("need -model and -weights: %w", errUsage)
	}
	if *iterations < 1 {
		return fmt.Errorf("-iterations %d: want at least 1", *iterations)
	}
	reduced, ownPrecision, err := nf.precisionOptions()
	if err != nil {
		return err
	}
	ctx, err := nf.context()
	if err != nil {
		return err
	}
	n, err := net.NewFromFile[float32](*model, net.Options{State: nf.state(caffepb.Phase_TEST), Context: ctx, Seed: 1701, Logger: glog.Logger(), SkipUnknownFields: nf.skipUnknown, ForwardOnly: true, Precision: reduced, OwnPrecision: ownPrecision})
	if err != nil {
		return err
	}
	defer n.Close()
	if err := loadWeightList(n, *weights); err != nil {
		return err
	}
	glog.Infof("Running for %d iterations.", *iterations)
	var scores []float32
	var loss float32
	names := n.OutputBlobNames()
	for i := range *iterations {
		l, err := n.Forward()
		if err != nil {
			return fmt.Errorf("iteration %d: %w", i, err)
		}
		loss += l
		k := 0
		for j, b := range n.OutputBlobs() {
			for _, v := range b.CPUData() {
				if i == 0 {
					scores = append(scores, v)
				} else {
					scores[k] += v
				}
				k++
				glog.Infof("Batch %d, %s = %s", i, names[j], num(v))
			}
		}
	}
	glog.Infof("Loss: %s", num(loss/float32(*iterations)))
	k := 0
	for j, b := range n.OutputBlobs() {
		w := n.OutputLossWeight(j)
		for range b.Count() {
			mean := scores[k] / float32(*iterations)
			msg := ""
			if w != 0 {
				msg = fmt.Sprintf(" (* %s = %s loss)", num(w), num(w*mean))
			}
			glog.Infof("%s = %s%s", names[j], num(mean), msg)
			fmt.Fprintf(stdout, "%s = %s%s\n", names[j], num(mean), msg)
			k++
		}
	}
	return nil
}

// loadWeightList copies comma-separated .caffemodel files into a net.
func loadWeightList(n *net.Net[float32], list string) error {
	for _, f := range splitList(list) {
		if err := n.CopyTrainedLayersFromFile(f); err != nil {
			return err
		}
	}
	return nil
}

// num formats a number as C++ streams do by default.
func num(v float32) string { return fmt.Sprintf("%.6g", v) }
