// Power: y = (shift + scale * x)^power;
// dy/dx = diff_scale * (shift + scale * x)^(power - 1), diff_scale = power * scale
// (power 2 without pow). The host handles power 0 or 1 and scale 0.

#define POWER(T, S)                                                                          \
  extern "C" __global__ void power_forward_##S(int n, const T *x, T *y, T power, T scale,    \
                                               T shift) {                                    \
    KERNEL_LOOP(i, n) { y[i] = pow(shift + scale * x[i], power); }                           \
  }                                                                                          \
  extern "C" __global__ void power_backward_##S(int n, const T *dy, const T *x, T *dx,       \
                                                T power, T scale, T shift, T diff_scale) {   \
    KERNEL_LOOP(i, n) {                                                                      \
      T base = shift + scale * x[i];                                                         \
      T g = power == (T)2 ? diff_scale * base : diff_scale * pow(base, power - (T)1);        \
      dx[i] = dy[i] * g;                                                                     \
    }                                                                                        \
  }
BOTH_TYPES(POWER)
