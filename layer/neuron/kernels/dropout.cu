// Dropout (TRAIN): mask arrives holding u ~ U(0, 1]; an element is kept
// when u > ratio (probability 1 - ratio). The mask leaves holding scale
// (= 1 / (1 - ratio)) for kept elements and 0 for dropped ones, for the
// backward pass (dx = dy * mask), and y = x * mask.

#define DROPOUT(T, S)                                                                        \
  extern "C" __global__ void dropout_forward_##S(int n, const T *x, T *mask, T *y, T ratio,  \
                                                 T scale) {                                  \
    KERNEL_LOOP(i, n) {                                                                      \
      T m = mask[i] > ratio ? scale : (T)0;                                                  \
      mask[i] = m;                                                                           \
      y[i] = x[i] * m;                                                                       \
    }                                                                                        \
  }
BOTH_TYPES(DROPOUT)

// The same on 16-bit storage (FLOAT16, BFLOAT16) with the FP32 mask, and
// the backward pass dx = dy * mask.
#define DROPOUT_HALF(S)                                                                     \
  extern "C" __global__ void dropout_forward_##S##_f32(int n, const half16 *x, float *mask,  \
                                                       half16 *y, float ratio, float scale) { \
    KERNEL_LOOP(i, n) {                                                                     \
      float m = mask[i] > ratio ? scale : 0.0f;                                             \
      mask[i] = m;                                                                          \
      y[i] = to_##S(from_##S(x[i]) * m);                                                    \
    }                                                                                       \
  }                                                                                         \
  extern "C" __global__ void dropout_backward_##S##_f32(int n, const half16 *dy,             \
                                                        const float *mask, half16 *dx) {    \
    KERNEL_LOOP(i, n) { dx[i] = to_##S(from_##S(dy[i]) * mask[i]); }                        \
  }
DROPOUT_HALF(f16)
DROPOUT_HALF(bf16)
