// Broadcasting for Bias and Scale: element i of x (outer x dim x inner)
// pairs with v[(i / inner) % dim]. x may be y (in place). n is an int, so
// the index is divided in 32 bits (64-bit division is several times slower).

#define BROADCAST(T, S)                                                                    \
  extern "C" __global__ void broadcast_add_##S(int n, int dim, int inner, const T *x,     \
                                               const T *v, T *y) {                         \
    KERNEL_LOOP(i, n) { y[i] = x[i] + v[((int)i / inner) % dim]; }                              \
  }                                                                                        \
  extern "C" __global__ void broadcast_mul_##S(int n, int dim, int inner, const T *x,     \
                                               const T *v, T *y) {                         \
    KERNEL_LOOP(i, n) { y[i] = x[i] * v[((int)i / inner) % dim]; }                              \
  }
BOTH_TYPES(BROADCAST)

// broadcast_add_relu: y = ReLU(x + v[c]), ReLU(u) = u > 0 ? u : u * slope
// (a convolution's bias and the in-place ReLU after it, in one pass).
#define BROADCAST_RELU(T, S)                                                                  \
  extern "C" __global__ void broadcast_add_relu_##S(int n, int dim, int inner, const T *x,   \
                                                    const T *v, T slope, T *y) {             \
    KERNEL_LOOP(i, n) {                                                                       \
      T u = x[i] + v[((int)i / inner) % dim];                                                 \
      y[i] = u > 0 ? u : u * slope;                                                           \
    }                                                                                         \
  }
BOTH_TYPES(BROADCAST_RELU)
