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
