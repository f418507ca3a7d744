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

// axis_convert_cl is axis_convert along the channels of 4-D blobs of
// which the part, the whole or both are channels-last (kit.Reduced's
// order: image, position, channel): n part elements over images of s
// positions, the part's part_c channels being channels [offset, offset +
// part_c) of the whole's whole_c. Thread i handles element i of the part,
// in the part's order. Names: axis_copy_cl_<source>_<destination>_f32.
template <typename SP, typename DP>
__device__ void axis_convert_cl(int n, int s, int part_c, int whole_c, int offset, int part_cl, int whole_cl,
                                int to_whole, const typename SP::E *src, typename DP::E *dst) {
  KERNEL_LOOP(i, n) {
    int j = (int)i, img, c, pos;  // 32-bit: 64-bit division is slow
    if (part_cl) {
      int q = j / part_c;
      c = j - q * part_c;
      img = q / s;
      pos = q - img * s;
    } else {
      int q = j / s;
      pos = j - q * s;
      img = q / part_c;
      c = q - img * part_c;
    }
    long long w = whole_cl ? ((long long)img * s + pos) * whole_c + offset + c
                           : ((long long)img * whole_c + offset + c) * s + pos;
    if (to_whole) {
      dst[w] = DP::st(SP::ld(src[i]));
    } else {
      dst[i] = DP::st(SP::ld(src[w]));
    }
  }
}

#define CONCAT_CONVERT_CL(SP, DP, NAME)                                                                \
  extern "C" __global__ void axis_copy_cl_##NAME##_f32(int n, int s, int part_c, int whole_c, int offset, \
                                                       int part_cl, int whole_cl, int to_whole,          \
                                                       const SP::E *src, DP::E *dst) {                   \
    axis_convert_cl<SP, DP>(n, s, part_c, whole_c, offset, part_cl, whole_cl, to_whole, src, dst);       \
  }
CONCAT_CONVERT_CL(StoreF16, StoreF16, f16_f16)
CONCAT_CONVERT_CL(StoreBF16, StoreBF16, bf16_bf16)
CONCAT_CONVERT_CL(StoreF32, StoreF16, f32_f16)
CONCAT_CONVERT_CL(StoreF16, StoreF32, f16_f32)
CONCAT_CONVERT_CL(StoreF32, StoreBF16, f32_bf16)
CONCAT_CONVERT_CL(StoreBF16, StoreF32, bf16_f32)

// axis_copy_cl8 is axis_convert_cl where the part and the whole are both
// channels-last in one 16-bit type and part_c, whole_c and offset are
// multiples of 8: a copy of rows of 16-byte vectors, n of them in the
// part, part_v = part_c / 8 a row, into rows of whole_v with the part's
// at vector offset_v. One thread a vector, no conversion: the element
// kernel's divisions made GoogLeNet's channels-last Concats 25% slower
// than its row-major ones.
extern "C" __global__ void axis_copy_cl8_f32(int n, int part_v, int whole_v, int offset_v, int to_whole,
                                             const uint4 *src, uint4 *dst) {
  KERNEL_LOOP(i, n) {
    int j = (int)i, row = j / part_v, v = j - row * part_v;
    long long w = (long long)row * whole_v + offset_v + v;
    if (to_whole) {
      dst[w] = src[i];
    } else {
      dst[i] = src[w];
    }
  }
}
