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

// axis_copy between blobs of different storages (a Concat computing in 16
// bits, whose bottoms and top the plan may store in FP32 or 16 bits each):
// each value converted from the source's storage SP to the destination's
// DP on the way. Names: axis_copy_<source>_<destination>_f32.
template <typename SP, typename DP>
__device__ void axis_convert(int n, int inner, int part_axis, int whole_axis, int offset, int to_whole,
                             const typename SP::E *src, typename DP::E *dst) {
  int block = part_axis * inner;
  KERNEL_LOOP(i, n) {
    int o = (int)i / block, r = (int)i - o * block;
    long long w = (o * whole_axis + offset) * inner + r;
    if (to_whole) {
      dst[w] = DP::st(SP::ld(src[i]));
    } else {
      dst[i] = DP::st(SP::ld(src[w]));
    }
  }
}

#define CONCAT_CONVERT(SP, DP, NAME)                                                             \
  extern "C" __global__ void axis_copy_##NAME##_f32(int n, int inner, int part_axis, int whole_axis, \
                                                    int offset, int to_whole, const SP::E *src,   \
                                                    DP::E *dst) {                                 \
    axis_convert<SP, DP>(n, inner, part_axis, whole_axis, offset, to_whole, src, dst);           \
  }
CONCAT_CONVERT(StoreF16, StoreF16, f16_f16)
CONCAT_CONVERT(StoreBF16, StoreBF16, bf16_bf16)
CONCAT_CONVERT(StoreF32, StoreF16, f32_f16)
CONCAT_CONVERT(StoreF16, StoreF32, f16_f32)
CONCAT_CONVERT(StoreF32, StoreBF16, f32_bf16)
CONCAT_CONVERT(StoreBF16, StoreF32, bf16_f32)
