// Copies between a part blob and its place along one axis of a whole blob
// (Concat's bottoms into the top, Slice's tops out of the bottom). The whole
// is outer blocks of whole_axis * inner elements; the part's block is
// part_axis * inner elements starting offset * inner into the whole's.
// Thread i handles element i of the part.

template <typename T>
__device__ void axis_copy(int n, int inner, int part_axis, int whole_axis, int offset, int to_whole,
                          const T *src, T *dst) {
  int block = part_axis * inner;  // at most n, an int
  KERNEL_LOOP(i, n) {
    int o = (int)i / block, r = (int)i - o * block;  // 32-bit: 64-bit division is slow
    long long w = (o * whole_axis + offset) * inner + r;
    if (to_whole) {
      dst[w] = src[i];
    } else {
      dst[i] = src[w];
    }
  }
}

#define CONCAT(T, S)                                                                            \
  extern "C" __global__ void axis_copy_##S(int n, int inner, int part_axis, int whole_axis,     \
                                           int offset, int to_whole, const T *src, T *dst) {    \
    axis_copy<T>(n, inner, part_axis, whole_axis, offset, to_whole, src, dst);                  \
  }
BOTH_TYPES(CONCAT)
