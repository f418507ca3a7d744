package netproto

import (
	"fmt"
	"slices"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// StateMeetsRule reports whether a net state satisfies a NetStateRule: the
// rule's phase (if set) is the state's, the state's level is within
// [min_level, max_level] (where set), the state has every one of the rule's
// stages and none of its not_stages.
func StateMeetsRule(state *caffepb.NetState, rule *caffepb.NetStateRule) bool {
	if rule.Phase != nil && rule.GetPhase() != state.GetPhase() {
		return false
	}
	if rule.MinLevel != nil && state.GetLevel() < rule.GetMinLevel() {
		return false
	}
	if rule.MaxLevel != nil && state.GetLevel() > rule.GetMaxLevel() {
		return false
	}
	for _, s := range rule.Stage {
		if !slices.Contains(state.Stage, s) {
			return false
		}
	}
	for _, s := range rule.NotStage {
		if slices.Contains(state.Stage, s) {
			return false
		}
	}
	return true
}

// FilterNet returns the layers of p that run in p's state: a layer with
// include rules is kept if any rule is met, a layer with exclude rules is
// dropped if any is met, and a layer with neither is kept. Both kinds of
// rule on one layer is an error.
func FilterNet(p *caffepb.NetParameter) ([]*caffepb.LayerParameter, error) {
	state := p.GetState()
	var kept []*caffepb.LayerParameter
	for _, l := range p.Layer {
		if len(l.Include) > 0 && len(l.Exclude) > 0 {
			return nil, fmt.Errorf("layer %q: specify either include rules or exclude rules; not both", l.GetName())
		}
		included := len(l.Include) == 0
		for _, r := range l.Exclude {
			if StateMeetsRule(state, r) {
				included = false
			}
		}
		for _, r := range l.Include {
			if StateMeetsRule(state, r) {
				included = true
			}
		}
		if included {
			kept = append(kept, l)
		}
	}
	return kept, nil
}
