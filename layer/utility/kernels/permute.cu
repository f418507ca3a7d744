// Kernels of SSD's Permute layer.

#define PERMUTE_MAX_AXES 32  // blob.MaxAxes

// PermuteSteps: for each top axis the bottom's stride along it and the
// top's own stride.
struct PermuteSteps {
  int axes;
  int old_steps[PERMUTE_MAX_AXES];
  int new_steps[PERMUTE_MAX_AXES];
};

#define PERMUTE(T, S)                                                                               \
  /* Permute: top element i is the bottom's at the sum over axes of        */                       \
  /* (i / new_steps[a] % dim) * old_steps[a]; backward writes it back.    */                        \
  extern "C" __global__ void permute_##S(int n, PermuteSteps g, T *x, T *y, int backward) {         \
    KERNEL_LOOP(i, n) {                                                                             \
      long long src = 0, rest = i;                                                                  \
      for (int a = 0; a < g.axes; ++a) {                                                            \
        int s = g.new_steps[a];                                                                     \
        src += (rest / s) * g.old_steps[a];                                                         \
        rest %= s;                                                                                  \
      }                                                                                             \
      if (backward) {                                                                               \
        x[src] = y[i];                                                                              \
      } else {                                                                                      \
        y[i] = x[src];                                                                              \
      }                                                                                             \
    }                                                                                               \
  }
BOTH_TYPES(PERMUTE)
