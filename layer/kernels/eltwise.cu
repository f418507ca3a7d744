// Eltwise MAX. The forward kernel runs once per bottom after the first:
// with first set it compares bottoms 0 and 1 (a tie goes to bottom 1, as
// Caffe's CPU code), afterwards the running maximum y against bottom idx,
// which must be strictly greater to win. The mask holds the winner's index.

template <typename T>
__device__ void eltwise_max_forward(int n, const T *a, const T *b, int idx, int first, T *y, T *mask) {
  KERNEL_LOOP(i, n) {
    if (first) {
      bool a_wins = a[i] > b[i];
      y[i] = a_wins ? a[i] : b[i];
      mask[i] = a_wins ? T(0) : T(1);
    } else if (b[i] > y[i]) {
      y[i] = b[i];
      mask[i] = T(idx);
    }
  }
}

// Routes the gradient to the winner: dx = dy where the mask names bottom
// idx, 0 elsewhere.
template <typename T>
__device__ void eltwise_max_backward(int n, const T *dy, const T *mask, int idx, T *dx) {
  KERNEL_LOOP(i, n) { dx[i] = mask[i] == T(idx) ? dy[i] : T(0); }
}

#define ELTWISE(T, S)                                                                           \
  extern "C" __global__ void eltwise_max_forward_##S(int n, const T *a, const T *b, int idx,   \
                                                     int first, T *y, T *mask) {               \
    eltwise_max_forward<T>(n, a, b, idx, first, y, mask);                                      \
  }                                                                                             \
  extern "C" __global__ void eltwise_max_backward_##S(int n, const T *dy, const T *mask,       \
                                                      int idx, T *dx) {                         \
    eltwise_max_backward<T>(n, dy, mask, idx, dx);                                              \
  }
BOTH_TYPES(ELTWISE)
