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

var registry = constructorMap{m: map[string]constructors{}}

// Register makes a layer type available to New (and so to nets) under typ,
// the string of LayerParameter.type. Users register their own layer types
// from their own packages, typically in an init function. Registering a
// type twice is an error.
func Register(typ string, f32 Constructor[float32], f64 Constructor[float64]) error {
	if typ == "" || f32 == nil || f64 == nil {
		return fmt.Errorf("layer: Register(%q) needs a type name and both constructors", typ)
	}
	return registry.add(typ, constructors{f32, f64}, "type")
}

// constructorMap is a registry of constructors by name.
type constructorMap struct {
	sync.RWMutex
	m map[string]constructors
}

// add registers c under name; a second registration of a name is an error
// naming what (a type, a Python layer).
func (r *constructorMap) add(name string, c constructors, what string) error {
	r.Lock()
	defer r.Unlock()
	if _, dup := r.m[name]; dup {
		return fmt.Errorf("layer: %s %q is already registered", what, name)
	}
	r.m[name] = c
	return nil
}

// register is Register for the built-in layers, whose names cannot clash.
func register(typ string, f32 Constructor[float32], f64 Constructor[float64]) {
	if err := Register(typ, f32, f64); err != nil {
		panic(err)
	}
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
	registry.RLock()
	c, ok := registry.m[p.GetType()]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("layer %q: unknown layer type %q (known types: %s)", p.GetName(), p.GetType(), strings.Join(Types(), ", "))
	}
	l, err := construct[T](c, p)
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
