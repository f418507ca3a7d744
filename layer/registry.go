package layer

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gocaffe/gocaffe/proto/caffepb"
)

// Constructor builds a layer from its parameter. It should only read the
// parameter; work that needs the bottoms belongs in LayerSetUp.
type Constructor[T Float] func(p *caffepb.LayerParameter) (Layer[T], error)

type constructors struct {
	f32 Constructor[float32]
	f64 Constructor[float64]
}

var registry = nameMap[*Spec]{m: map[string]*Spec{}}

// Register makes a layer type available to New (and so to nets) under typ,
// the string of LayerParameter.type, with a Spec that says nothing else
// (no GPU engine, no in-place computing, ...): the short form of
// RegisterType for a program's own simple types. Registering a type twice
// is an error.
func Register(typ string, f32 Constructor[float32], f64 Constructor[float64]) error {
	return RegisterType(Spec{Type: typ, New32: f32, New64: f64})
}

// nameMap is a registry by name: of specs by type, of Python layers by
// "module.layer".
type nameMap[V any] struct {
	sync.RWMutex
	m map[string]V
}

// add registers s under name; a second registration of a name is an error
// naming what it is.
func (r *nameMap[V]) add(name string, v V, what string) error {
	r.Lock()
	defer r.Unlock()
	if _, dup := r.m[name]; dup {
		return fmt.Errorf("layer: %s %q is already registered", what, name)
	}
	r.m[name] = v
	return nil
}

// get returns what is registered under name, or V's zero value.
func (r *nameMap[V]) get(name string) V {
	r.RLock()
	defer r.RUnlock()
	return r.m[name]
}

// Types returns the registered layer types, sorted.
func Types() []string {
	registry.RLock()
	defer registry.RUnlock()
	types := make([]string, 0, len(registry.m))
	for t := range registry.m {
		types = append(types, t)
	}
	slices.Sort(types)
	return types
}

// New builds the layer p describes, looking its type up in the registry.
func New[T Float](p *caffepb.LayerParameter) (Layer[T], error) {
	s := registry.get(p.GetType())
	if s == nil {
		return nil, fmt.Errorf("layer %q: unknown layer type %q (known types: %s)", p.GetName(), p.GetType(), strings.Join(Types(), ", "))
	}
	l, err := construct[T](constructors{s.New32, s.New64}, p)
	if err != nil {
		return nil, fmt.Errorf("layer %q (%s): %w", p.GetName(), p.GetType(), err)
	}
	return l, nil
}

// construct calls the constructor of c for T.
func construct[T Float](c constructors, p *caffepb.LayerParameter) (Layer[T], error) {
	var l any
	var err error
	var zero T
	switch any(zero).(type) {
	case float32:
		l, err = c.f32(p)
	case float64:
		l, err = c.f64(p)
	}
	if err != nil {
		return nil, err
	}
	return l.(Layer[T]), nil
}
