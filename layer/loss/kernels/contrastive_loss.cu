// ContrastiveLoss backward, one thread per feature element: similar pairs
// alpha * diff; dissimilar ones beta * diff while within the margin.

#define CONTRASTIVE_LOSS(T, S)                                                               \
  extern "C" __global__ void contrastive_loss_backward_##S(                                  \
      int n, int channels, T margin, int legacy, T alpha, const T *y, const T *diff,         \
      const T *dist_sq, T *dx) {                                                             \
    KERNEL_LOOP(i, n) {                                                                      \
      long long pair = i / channels;                                                         \
      if ((int)y[pair] != 0) {                                                               \
        dx[i] = alpha * diff[i];                                                             \
      } else {                                                                               \
        T mdist, beta;                                                                       \
        if (legacy) {                                                                        \
          mdist = margin - dist_sq[pair];                                                    \
          beta = -alpha;                                                                     \
        } else {                                                                             \
          T dist = sqrt(dist_sq[pair]);                                                      \
          mdist = margin - dist;                                                             \
          beta = -alpha * mdist / (dist + (T)1e-4);                                          \
        }                                                                                    \
        dx[i] = mdist > 0 ? beta * diff[i] : (T)0;                                           \
      }                                                                                      \
    }                                                                                        \
  }
BOTH_TYPES(CONTRASTIVE_LOSS)
