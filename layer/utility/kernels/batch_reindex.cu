// BatchReindex: top item i is bottom item permut[i] (checked on the host);
// the gradient of an item sums those of its copies.

#define BATCH_REINDEX(T, S)                                                                  \
  extern "C" __global__ void batch_reindex_forward_##S(int n, const T *x, const T *permut,   \
                                                       T *y, int inner) {                    \
    KERNEL_LOOP(i, n) {                                                                      \
      y[i] = x[(long long)permut[i / inner] * inner + i % inner];                            \
    }                                                                                        \
  }                                                                                          \
  extern "C" __global__ void batch_reindex_backward_##S(int n, const T *dy,                  \
                                                        const T *permut, T *dx, int inner) { \
    KERNEL_LOOP(i, n) {                                                                      \
      atomicAdd(dx + (long long)permut[i / inner] * inner + i % inner, dy[i]);               \
    }                                                                                        \
  }
BOTH_TYPES(BATCH_REINDEX)
