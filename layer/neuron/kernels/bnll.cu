// BNLL (softplus): y = x > 0 ? x + log(1 + exp(-x)) : log(1 + exp(x));
// dy/dx = e / (e + 1) with e = exp(min(x, 50)) (Caffe's kBNLL_THRESHOLD).

#define BNLL_THRESHOLD 50

#define BNLL(T, S)                                                                           \
  extern "C" __global__ void bnll_forward_##S(int n, const T *x, T *y) {                     \
    KERNEL_LOOP(i, n) {                                                                      \
      T v = x[i];                                                                            \
      y[i] = v > 0 ? v + log1p(exp(-v)) : log1p(exp(v));                                     \
    }                                                                                        \
  }                                                                                          \
  extern "C" __global__ void bnll_backward_##S(int n, const T *dy, const T *x, T *dx) {      \
    KERNEL_LOOP(i, n) {                                                                      \
      T e = exp(min(x[i], (T)BNLL_THRESHOLD));                                               \
      dx[i] = dy[i] * (e / (e + 1));                                                         \
    }                                                                                        \
  }
BOTH_TYPES(BNLL)
