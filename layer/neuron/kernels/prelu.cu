// PReLU: y = x > 0 ? x : a[s] * x, where element i's slope is
// s = (i / dim) % channels / div (div is 1 per channel, channels when one
// slope is shared).

template <typename T>
__device__ void prelu_forward(int n, int channels, int dim, int div, const T *x, const T *a, T *y) {
  KERNEL_LOOP(i, n) {
    T v = x[i];
    y[i] = v > 0 ? v : a[(i / dim) % channels / div] * v;
  }
}

template <typename T>
__device__ void prelu_backward(int n, int channels, int dim, int div, const T *dy, const T *x,
                               const T *a, T *dx) {
  KERNEL_LOOP(i, n) { dx[i] = x[i] > 0 ? dy[i] : a[(i / dim) % channels / div] * dy[i]; }
}

// Block s sums dy * x over the non-positive inputs of slope s: in each of
// the num items (stride elements apart), the run of `inner` elements at
// s * inner. Launched with one block of 512 threads per slope; the result
// is added to da[s] (parameter gradients accumulate).
template <typename T>
__device__ void prelu_param_backward(int num, int stride, int inner, const T *dy, const T *x, T *da) {
  __shared__ T partial[512];
  const int s = blockIdx.x;
  const long long total = (long long)num * inner;
  T sum = 0;
  for (long long j = threadIdx.x; j < total; j += blockDim.x) {
    long long i = (j / inner) * stride + (long long)s * inner + j % inner;
    T v = x[i];
    if (v <= 0) sum += dy[i] * v;
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) da[s] += partial[0];
}

#define PRELU(T, S)                                                                              \
  extern "C" __global__ void prelu_forward_##S(int n, int channels, int dim, int div,           \
                                               const T *x, const T *a, T *y) {                   \
    prelu_forward<T>(n, channels, dim, div, x, a, y);                                            \
  }                                                                                              \
  extern "C" __global__ void prelu_backward_##S(int n, int channels, int dim, int div,          \
                                                const T *dy, const T *x, const T *a, T *dx) {    \
    prelu_backward<T>(n, channels, dim, div, dy, x, a, dx);                                      \
  }                                                                                              \
  extern "C" __global__ void prelu_param_backward_##S(int num, int stride, int inner,           \
                                                      const T *dy, const T *x, T *da) {          \
    prelu_param_backward<T>(num, stride, inner, dy, x, da);                                      \
  }
BOTH_TYPES(PRELU)
