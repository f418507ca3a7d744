package netproto_test

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gocaffe/gocaffe/netproto"
	"github.com/gocaffe/gocaffe/proto/caffepb"
)

func TestStateFiltering(t *testing.T) {
	text := `
layer { name: "data" type: "DummyData" top: "data" dummy_data_param { shape { dim: 1 dim: 2 } } }
layer { name: "train_only" type: "ReLU" bottom: "data" top: "a" include { phase: TRAIN } }
layer { name: "test_only" type: "ReLU" bottom: "data" top: "b" include { phase: TEST } }
layer { name: "level1" type: "ReLU" bottom: "data" top: "c" include { min_level: 1 } }
layer { name: "level_le2" type: "ReLU" bottom: "data" top: "d" include { max_level: 2 } }
layer { name: "stage_ab" type: "ReLU" bottom: "data" top: "e" include { stage: "a" stage: "b" } }
layer { name: "not_stage_a" type: "ReLU" bottom: "data" top: "f" exclude { stage: "a" } }
layer { name: "either" type: "ReLU" bottom: "data" top: "g" include { stage: "x" } include { phase: TEST } }
layer { name: "notstage" type: "ReLU" bottom: "data" top: "h" include { not_stage: "b" } }`
	cases := []struct {
		state *caffepb.NetState
		want  []string
	}{
		{&caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum()}, []string{"data", "train_only", "level_le2", "not_stage_a", "notstage"}},
		{&caffepb.NetState{Phase: caffepb.Phase_TEST.Enum(), Level: proto.Int32(3)}, []string{"data", "test_only", "level1", "not_stage_a", "either", "notstage"}},
		{&caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum(), Stage: []string{"a", "b"}}, []string{"data", "train_only", "level_le2", "stage_ab"}},
		{&caffepb.NetState{Phase: caffepb.Phase_TRAIN.Enum(), Stage: []string{"x"}, Level: proto.Int32(1)}, []string{"data", "train_only", "level1", "level_le2", "not_stage_a", "either", "notstage"}},
	}
	for _, c := range cases {
		p := parseNet(t, text)
		p.State = c.state
		kept, err := netproto.FilterNet(p)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range kept {
			names = append(names, l.GetName())
		}
		if !slices.Equal(names, c.want) {
			t.Errorf("state %v: kept %v, want %v", c.state, names, c.want)
		}
	}
	both := parseNet(t, `layer { name: "x" type: "ReLU" include { phase: TRAIN } exclude { phase: TEST } }`)
	if _, err := netproto.FilterNet(both); err == nil || !strings.Contains(err.Error(), "either include rules or exclude rules") {
		t.Errorf("include and exclude: err = %v", err)
	}
}
