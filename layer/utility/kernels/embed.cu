// Embed: top row i is weight row idx[i] (indices checked on the host);
// the weight gradient adds each top row's gradient to its weight row.

#define EMBED(T, S)                                                                          \
  extern "C" __global__ void embed_forward_##S(int n, const T *idx, const T *w, T *y,        \
                                               int cols) {                                   \
    KERNEL_LOOP(i, n) {                                                                      \
      long long row = i / cols;                                                              \
      y[i] = w[(long long)idx[row] * cols + i % cols];                                       \
    }                                                                                        \
  }                                                                                          \
  extern "C" __global__ void embed_backward_##S(int n, const T *idx, const T *dy, T *dw,     \
                                                int cols) {                                  \
    KERNEL_LOOP(i, n) {                                                                      \
      long long row = i / cols;                                                              \
      atomicAdd(dw + (long long)idx[row] * cols + i % cols, dy[i]);                          \
    }                                                                                        \
  }
BOTH_TYPES(EMBED)
