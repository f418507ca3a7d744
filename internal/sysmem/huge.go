package sysmem

import "unsafe"

// HugeFrom is the least size HugePages is worth asking for: a few huge
// pages' worth, so that most of it lies on whole 2 MiB pages.
const HugeFrom = 8 << 20

// HugePages asks the system to back the memory of s with huge pages
// (Linux's MADV_COLLAPSE over the whole 2 MiB pages inside it), and
// reports whether it did. It is for large memory read whole again and
// again, such as an inference net's fully-connected weights: streaming
// 151 MB of them on two cores of an AMD EPYC (Zen 4) read 32 GB/s on 4 KiB
// pages and 46 GB/s on 2 MiB ones, the TLB's misses and the prefetchers'
// stops at every 4 KiB page costing the rest. It takes time (the kernel
// copies the pages: 40-560 ms for 151 MB on that machine, with the
// compaction it needs), changes no value, and is only advice: the
// memory is Go's as before, and a kernel without transparent huge pages,
// or a system other than Linux, leaves it as it is. s shorter than
// HugeFrom is left as it is.
func HugePages[E any](s []E) bool {
	var zero E
	n := uintptr(len(s)) * unsafe.Sizeof(zero)
	if n < HugeFrom {
		return false
	}
	const page = 2 << 20
	base := unsafe.Pointer(unsafe.SliceData(s))
	start := uintptr(base)
	lo, hi := (start+page-1)&^(page-1), (start+n)&^(page-1)
	if hi <= lo {
		return false
	}
	return collapse(unsafe.Slice((*byte)(unsafe.Add(base, lo-start)), hi-lo))
}
