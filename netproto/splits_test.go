package netproto_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gocaffe/gocaffe/netproto"
)

// Caffe's split insertion tests: names, order, in-place use and losses.
func TestInsertSplits(t *testing.T) {
	layers := parseNet(t, `
layer { name: "data" type: "Input" top: "data" top: "label" }
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1" }
layer { name: "relu" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "data" top: "ip2" }
layer { name: "loss1" type: "EuclideanLoss" bottom: "ip1" bottom: "label" top: "loss1" }
layer { name: "loss2" type: "EuclideanLoss" bottom: "ip2" bottom: "label" top: "loss2" }`).Layer
	out, err := netproto.InsertSplits(layers)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range out {
		got = append(got, l.GetName()+"("+strings.Join(l.Bottom, ",")+"->"+strings.Join(l.Top, ",")+")")
	}
	want := []string{
		"data(->data,label)",
		"data_data_0_split(data->data_data_0_split_0,data_data_0_split_1)",
		"label_data_1_split(label->label_data_1_split_0,label_data_1_split_1)",
		"ip1(data_data_0_split_0->ip1)",
		"relu(ip1->ip1)",
		"ip2(data_data_0_split_1->ip2)",
		"loss1(ip1,label_data_1_split_0->loss1)",
		"loss2(ip2,label_data_1_split_1->loss2)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("split insertion:\n got %v\nwant %v", got, want)
	}
	// A top that is a loss (explicit weight) and also read counts twice:
	// the split's first output carries the loss.
	lossy, err := netproto.InsertSplits(parseNet(t, `
layer { name: "data" type: "Input" top: "data" }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" loss_weight: 0.5 }
layer { name: "relu" type: "ReLU" bottom: "ip" top: "r" }`).Layer)
	if err != nil {
		t.Fatal(err)
	}
	split := lossy[2]
	if split.GetType() != "Split" || !slices.Equal(split.Top, []string{"ip_ip_0_split_0", "ip_ip_0_split_1"}) ||
		!slices.Equal(split.LossWeight, []float32{0.5, 0}) || len(lossy[1].LossWeight) != 0 || lossy[3].Bottom[0] != "ip_ip_0_split_1" {
		t.Errorf("loss split: %v / %v / %v", lossy[1], split, lossy[3])
	}
	if _, err := netproto.InsertSplits(parseNet(t, `layer { name: "a" type: "ReLU" bottom: "ghost" top: "x" }`).Layer); err == nil ||
		!strings.Contains(err.Error(), `unknown bottom blob "ghost" (layer "a", bottom index 0)`) {
		t.Errorf("unknown bottom: err = %v", err)
	}
}
