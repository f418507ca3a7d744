package cuda

import (
	"fmt"
	"unsafe"
)

// MaxArgs is the most arguments a kernel launch can pass; argSlots is the
// room they have, in 8-byte slots (a struct argument takes several).
const (
	MaxArgs  = 24 // GC_MAX_ARGS in gocaffe_cuda.h
	argSlots = 64 // GC_ARG_SLOTS in gocaffe_cuda.h
)

// Args holds a kernel's arguments in order. Scalars and pointers take one
// 8-byte slot each; Bytes arguments (structs passed by value) take as many
// as they need. Build it on the stack and pass its address to Launch:
// launching allocates nothing.
type Args struct {
	slots [argSlots]uint64
	off   [MaxArgs]int32 // first slot of each argument
	n     int            // arguments
	used  int            // slots
}

func (a *Args) push(v uint64) *Args {
	a.begin(1)
	a.slots[a.used] = v
	a.used++
	return a
}

// begin records the start of an argument of the given number of slots.
func (a *Args) begin(slots int) {
	if a.n == MaxArgs || a.used+slots > argSlots {
		panic(fmt.Sprintf("cuda: kernel arguments exceed %d arguments or %d bytes", MaxArgs, 8*argSlots))
	}
	a.off[a.n] = int32(a.used)
	a.n++
}

// Int appends a 32-bit int argument.
func (a *Args) Int(v int) *Args { return a.push(uint64(uint32(int32(v)))) }

// Uint64 appends a 64-bit unsigned argument.
func (a *Args) Uint64(v uint64) *Args { return a.push(v) }

// Ptr appends a device pointer argument.
func (a *Args) Ptr(p DevicePtr) *Args { return a.push(uint64(p)) }

// Float32 appends a float argument.
func (a *Args) Float32(v float32) *Args { return a.push(uint64(*(*uint32)(unsafe.Pointer(&v)))) }

// Float64 appends a double argument.
func (a *Args) Float64(v float64) *Args { return a.push(*(*uint64)(unsafe.Pointer(&v))) }

// Int32s appends a struct argument made of the given ints, as a kernel
// parameter such as `struct { int v[8]; }` passed by value.
func (a *Args) Int32s(v []int32) *Args {
	slots := (len(v) + 1) / 2
	a.begin(slots)
	dst := unsafe.Slice((*int32)(unsafe.Pointer(&a.slots[a.used])), 2*slots)
	copy(dst, v)
	a.used += slots
	return a
}
