package blob_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/blob"
	"github.com/gocaffe/gocaffe/filler"
	"github.com/gocaffe/gocaffe/mathfn"
	"github.com/gocaffe/gocaffe/proto/caffepb"
	"github.com/gocaffe/gocaffe/protoio"
)

// Make a blob, fill it with Xavier weights, save it as a .binaryproto that
// Caffe can read, and load it back.
func Example() {
	weights, err := blob.New[float32](20, 1, 5, 5)
	if err != nil {
		log.Fatal(err)
	}
	xavier, err := filler.New[float32](&caffepb.FillerParameter{Type: proto.String("xavier")})
	if err != nil {
		log.Fatal(err)
	}
	if err := xavier.Fill(weights, mathfn.NewRNG(1701)); err != nil {
		log.Fatal(err)
	}

	dir, _ := os.MkdirTemp("", "gocaffe-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "weights.binaryproto")
	if err := protoio.WriteProtoToBinaryFile(weights.ToProto(false), path); err != nil {
		log.Fatal(err)
	}

	var saved caffepb.BlobProto
	if err := protoio.ReadProtoFromBinaryFile(path, &saved); err != nil {
		log.Fatal(err)
	}
	loaded, _ := blob.New[float32]()
	if err := loaded.FromProto(&saved, true); err != nil {
		log.Fatal(err)
	}
	fmt.Println(loaded.ShapeString())
	fmt.Println(loaded.AsumData() == weights.AsumData())
	// Output:
	// 20 1 5 5 (500)
	// true
}
