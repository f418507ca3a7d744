package net_test

import (
	"fmt"
	"log"
	"log/slog"

	"github.com/gocaffe/gocaffe/net"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// Walk a net's layers with their blobs and learnable parameters, as an
// exporter to another format does.
func ExampleNet_Graph() {
	var p caffepb.NetParameter
	err := protoio.ParseText([]byte(`
layer { name: "data" type: "Input" top: "x" input_param { shape { dim: 1 dim: 3 } } }
layer { name: "fc1" type: "InnerProduct" bottom: "x" top: "h" param { name: "w" lr_mult: 1 } param { lr_mult: 2 }
  inner_product_param { num_output: 3 } }
layer { name: "relu" type: "ReLU" bottom: "h" top: "h" }
layer { name: "fc2" type: "InnerProduct" bottom: "h" top: "y" param { name: "w" } inner_product_param { num_output: 3 bias_term: false } }`), &p)
	if err != nil {
		log.Fatal(err)
	}
	n, err := net.New[float32](&p, net.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	for node := range n.Graph().Nodes() {
		fmt.Print(node.Name(), " (", node.Type(), "):")
		for b := range node.Bottoms() {
			fmt.Print(" ", b.Name())
		}
		fmt.Print(" ->")
		for t := range node.Tops() {
			fmt.Print(" ", t.Name())
		}
		for p := range node.Params() {
			fmt.Printf(" [%s %s lr_mult %v", p.Name(), p.Blob().ShapeString(), p.LRMult())
			if owner, shared := p.Owner(); shared {
				fmt.Printf(", shared with %s", owner.Node().Name())
			}
			fmt.Print("]")
		}
		fmt.Println()
	}
	// Output:
	// data (Input): -> x
	// fc1 (InnerProduct): x -> h [w 3 3 (9) lr_mult 1] [1 3 (3) lr_mult 2]
	// relu (ReLU): h -> h
	// fc2 (InnerProduct): h -> y [w 3 3 (9) lr_mult 1, shared with fc1]
}
