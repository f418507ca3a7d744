// Accuracy: thread i handles position (i / inner, i % inner). correct[i] is
// 1 when fewer than top_k other classes score at least as high as the true
// class, counts[i] is 1 unless the label is ignored; an invalid label makes
// correct[i] NaN (the host then says which). With per_class, each counted
// position also adds to its class's totals.

template <typename T>
__device__ void accuracy_forward(int n, int classes, int inner, int top_k, const T *scores,
                                 const T *label, T *correct, T *counts, int has_ignore,
                                 int ignore, int per_class, T *class_correct, T *class_num) {
  KERNEL_LOOP(i, n) {
    T v = label[i];
    int c = (int)v;
    if (has_ignore && c == ignore) {
      correct[i] = 0;
      counts[i] = 0;
      continue;
    }
    counts[i] = 1;
    if (c < 0 || c >= classes || (T)c != v) {
      correct[i] = nan("");
      continue;
    }
    long long base = (i / inner) * (long long)classes * inner + i % inner;
    T p = scores[base + (long long)c * inner];
    int better = -1;  // the true class counts itself
    for (int k = 0; k < classes && better < top_k; k++) {
      better += scores[base + (long long)k * inner] >= p;
    }
    T ok = better < top_k ? 1 : 0;
    correct[i] = ok;
    if (per_class) {
      atomicAdd(class_num + c, (T)1);
      atomicAdd(class_correct + c, ok);
    }
  }
}

template <typename T>
__device__ void accuracy_per_class(int classes, const T *class_correct, const T *class_num,
                                   T *acc) {
  KERNEL_LOOP(c, classes) { acc[c] = class_num[c] == 0 ? 0 : class_correct[c] / class_num[c]; }
}

#define ACCURACY(T, S)                                                                          \
  extern "C" __global__ void accuracy_forward_##S(                                              \
      int n, int classes, int inner, int top_k, const T *scores, const T *label, T *correct,    \
      T *counts, int has_ignore, int ignore, int per_class, T *class_correct, T *class_num) {   \
    accuracy_forward<T>(n, classes, inner, top_k, scores, label, correct, counts, has_ignore,   \
                        ignore, per_class, class_correct, class_num);                          \
  }                                                                                             \
  extern "C" __global__ void accuracy_per_class_##S(int classes, const T *class_correct,       \
                                                    const T *class_num, T *acc) {               \
    accuracy_per_class<T>(classes, class_correct, class_num, acc);                              \
  }
BOTH_TYPES(ACCURACY)
