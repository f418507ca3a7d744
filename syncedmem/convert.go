package syncedmem

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/x448/float16"
)

// Storage is how the device copy stores the host copy's elements.
type Storage int

// The storages of a device copy. The reduced ones hold float32 host
// elements as 16-bit floats on the device, half the bytes: the memory of
// GPU layers that compute in half precision (NVCaffe's FLOAT16 and
// BFLOAT16 blobs). Values are converted on every copy between host and
// device.
const (
	StorageNative   Storage = iota // the host's bytes as they are (float32 or float64)
	StorageFloat16                 // float32 elements as IEEE 754 binary16 on the device
	StorageBFloat16                // float32 elements as bfloat16 on the device
)

// String returns "native", or NVCaffe's Type name for a reduced storage
// ("FLOAT16", "BFLOAT16").
func (s Storage) String() string {
	switch s {
	case StorageNative:
		return "native"
	case StorageFloat16:
		return "FLOAT16"
	case StorageBFloat16:
		return "BFLOAT16"
	}
	return fmt.Sprintf("Storage(%d)", int(s))
}

// Reduced reports whether s stores float32 elements as 16-bit floats
// (FLOAT16 or BFLOAT16).
func (s Storage) Reduced() bool { return s == StorageFloat16 || s == StorageBFloat16 }

// valid reports whether s is one of the three storages.
func (s Storage) valid() bool { return s >= StorageNative && s <= StorageBFloat16 }

// Narrow writes src rounded to s's 16-bit format into dst, which must hold
// at least len(src) values. Rounding is to nearest, ties to even; NaN stays
// a (quiet) NaN, ±Inf stays, and values beyond the format's range become
// ±Inf (for FLOAT16 every |x| >= 65520). FLOAT16 subnormals are produced
// correctly. It panics unless s is reduced.
func Narrow(dst []uint16, src []float32, s Storage) {
	dst = dst[:len(src)]
	switch s {
	case StorageFloat16:
		for i, v := range src {
			dst[i] = float16.Fromfloat32(v).Bits()
		}
	case StorageBFloat16:
		for i, v := range src {
			dst[i] = bf16FromBits(math.Float32bits(v))
		}
	default:
		panic("syncedmem: Narrow to " + s.String() + " storage")
	}
}

// bf16FromBits rounds the float32 of bits u to bfloat16, to nearest even.
func bf16FromBits(u uint32) uint16 {
	if u&0x7FFFFFFF > 0x7F800000 { // NaN: keep sign and top payload, make it quiet
		return uint16(u>>16) | 0x0040
	}
	return uint16((u + 0x7FFF + (u>>16)&1) >> 16)
}

// Widen writes the 16-bit values of src in s's format into dst, which must
// hold at least len(src) values, as float32. Every value converts exactly.
// It panics unless s is reduced.
func Widen(dst []float32, src []uint16, s Storage) {
	dst = dst[:len(src)]
	switch s {
	case StorageFloat16:
		for i, h := range src {
			dst[i] = float16.Frombits(h).Float32()
		}
	case StorageBFloat16:
		for i, h := range src {
			dst[i] = math.Float32frombits(uint32(h) << 16)
		}
	default:
		panic("syncedmem: Widen from " + s.String() + " storage")
	}
}

// float32s views the first n*4 bytes of b as float32 elements (the host is
// little-endian, and host buffers are aligned).
func float32s(b []byte, n int) []float32 {
	if n == 0 {
		return nil
	}
	_ = b[4*n-1]
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// uint16Bytes views h as bytes.
func uint16Bytes(h []uint16) []byte {
	if len(h) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(h))), 2*len(h))
}
