// BatchNorm's running sums after a training pass on cuDNN, in one launch
// instead of six (scal, add_scalar and two axpby, each a scal and an
// axpy): s = maf*s + 1, mean = maf*mean + batch mean, var = maf*var +
// batch variance, rounded as those operations round (the products, then
// the sums; no fused multiply-add).

#define BN_RUNNING(T, S, MUL, ADD)                                                         \
  extern "C" __global__ void bn_running_sums_##S(int c, T maf, const T *mean,             \
                                                 const T *var, T *s, T *rmean, T *rvar) { \
    KERNEL_LOOP(i, c) {                                                                    \
      rmean[i] = ADD(MUL(maf, rmean[i]), mean[i]);                                         \
      rvar[i] = ADD(MUL(maf, rvar[i]), var[i]);                                            \
      if (i == 0) s[0] = ADD(MUL(maf, s[0]), T(1));                                        \
    }                                                                                      \
  }
BN_RUNNING(float, f32, __fmul_rn, __fadd_rn)
BN_RUNNING(double, f64, __dmul_rn, __dadd_rn)
