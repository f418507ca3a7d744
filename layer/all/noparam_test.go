package all_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/layer"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// A layer written without its type's parameter message (layer { type:
// "ArgMax" }) is either valid, taking the defaults, or an error: never a
// panic. ArgMax, Pooling and Tile used to dereference the missing message.
func TestNewWithoutTypeParameter(t *testing.T) {
	for _, typ := range layer.Types() {
		p := &caffepb.LayerParameter{Name: proto.String("l"), Type: proto.String(typ)}
		panicked := func() (r any) {
			defer func() { r = recover() }()
			layer.New[float32](p) // an error is fine
			return nil
		}()
		if panicked != nil {
			t.Errorf("%s without its parameter panics: %v", typ, panicked)
		}
	}
	// ArgMax's defaults are valid: top 1 over each item.
	if _, err := layer.New[float32](&caffepb.LayerParameter{Type: proto.String("ArgMax")}); err != nil {
		t.Errorf("ArgMax without argmax_param: %v", err)
	}
}
