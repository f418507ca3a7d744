// Tile: each of outer slices of inner elements is repeated tiles times;
// the backward pass sums the copies.

#define TILE(T, S)                                                                           \
  extern "C" __global__ void tile_forward_##S(int n, const T *x, T *y, int inner,            \
                                              int tiles) {                                   \
    KERNEL_LOOP(i, n) {                                                                      \
      long long o = i / ((long long)tiles * inner);                                          \
      y[i] = x[o * inner + i % inner];                                                       \
    }                                                                                        \
  }                                                                                          \
  extern "C" __global__ void tile_backward_##S(int n, const T *dy, T *dx, int inner,         \
                                               int tiles) {                                  \
    KERNEL_LOOP(j, n) {                                                                      \
      long long o = j / inner, r = j % inner;                                                \
      T s = 0;                                                                               \
      for (int t = 0; t < tiles; ++t) s += dy[(o * tiles + t) * inner + r];                  \
      dx[j] = s;                                                                             \
    }                                                                                        \
  }
BOTH_TYPES(TILE)
