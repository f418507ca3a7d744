// LSTMUnit, one thread per (stream, unit): gates i, f, o, g from the 4H
// gate inputs; c = cont f c_prev + i g, h = o tanh(c). Backward as Caffe's
// LSTMUnitLayer.

#define LSTM_SIGMOID(T, v) ((T)1 / ((T)1 + exp(-(v))))

#define LSTM_UNIT(T, S)                                                                      \
  extern "C" __global__ void lstm_unit_forward_##S(int n, int hidden, const T *c_prev,       \
                                                   const T *x, const T *cont, T *c, T *h) {  \
    KERNEL_LOOP(idx, n) {                                                                    \
      long long s = idx / hidden, d = idx % hidden;                                          \
      const T *g4 = x + s * 4 * hidden;                                                      \
      T i = LSTM_SIGMOID(T, g4[d]);                                                          \
      T f = cont[s] == 0 ? (T)0 : cont[s] * LSTM_SIGMOID(T, g4[hidden + d]);                 \
      T o = LSTM_SIGMOID(T, g4[2 * hidden + d]);                                             \
      T g = tanh(g4[3 * hidden + d]);                                                        \
      T cv = f * c_prev[idx] + i * g;                                                        \
      c[idx] = cv;                                                                           \
      h[idx] = o * tanh(cv);                                                                 \
    }                                                                                        \
  }                                                                                          \
  extern "C" __global__ void lstm_unit_backward_##S(                                         \
      int n, int hidden, const T *c_prev, const T *x, const T *cont, const T *c,             \
      const T *dc, const T *dh, T *dc_prev, T *dx) {                                         \
    KERNEL_LOOP(idx, n) {                                                                    \
      long long s = idx / hidden, d = idx % hidden;                                          \
      const T *g4 = x + s * 4 * hidden;                                                      \
      T *dg4 = dx + s * 4 * hidden;                                                          \
      T i = LSTM_SIGMOID(T, g4[d]);                                                          \
      T f = cont[s] == 0 ? (T)0 : cont[s] * LSTM_SIGMOID(T, g4[hidden + d]);                 \
      T o = LSTM_SIGMOID(T, g4[2 * hidden + d]);                                             \
      T g = tanh(g4[3 * hidden + d]);                                                        \
      T tc = tanh(c[idx]);                                                                   \
      T term = dc[idx] + dh[idx] * o * (1 - tc * tc);                                        \
      dc_prev[idx] = term * f;                                                               \
      dg4[d] = term * g * i * (1 - i);                                                       \
      dg4[hidden + d] = term * c_prev[idx] * f * (1 - f);                                    \
      dg4[2 * hidden + d] = dh[idx] * tc * o * (1 - o);                                      \
      dg4[3 * hidden + d] = term * i * (1 - g * g);                                          \
    }                                                                                        \
  }                                                                                          \
  /* y[s*hidden + d] = cont[s] * x[s*hidden + d]: a recurrent state masked by cont. */       \
  extern "C" __global__ void cont_scale_##S(int n, int hidden, const T *cont, const T *x,    \
                                            T *y) {                                          \
    KERNEL_LOOP(idx, n) { y[idx] = cont[idx / hidden] * x[idx]; }                            \
  }
BOTH_TYPES(LSTM_UNIT)
