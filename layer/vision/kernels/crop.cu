// Crop: copies the window of the big blob (bottom 0) that starts at offset
// and has the top's shape. Thread i handles element i of the top (small).

#define CROP_MAX_AXES 32  // blob.MaxAxes

struct CropGeom {
  int n;                      // number of axes
  int top[CROP_MAX_AXES];     // the window's (top's) shape
  int bottom[CROP_MAX_AXES];  // bottom 0's shape
  int offset[CROP_MAX_AXES];  // where the window starts
};

template <typename T>
__device__ void crop_copy(int count, CropGeom g, const T *src, T *dst, int to_big) {
  KERNEL_LOOP(i, count) {
    long long rem = i, big = 0, stride = 1;
    for (int a = g.n - 1; a >= 0; a--) {
      long long c = rem % g.top[a];
      rem /= g.top[a];
      big += (c + g.offset[a]) * stride;
      stride *= g.bottom[a];
    }
    if (to_big) {
      dst[big] = src[i];
    } else {
      dst[i] = src[big];
    }
  }
}

#define CROP(T, S)                                                                             \
  extern "C" __global__ void crop_copy_##S(int count, CropGeom g, const T *src, T *dst,        \
                                           int to_big) {                                       \
    crop_copy<T>(count, g, src, dst, to_big);                                                  \
  }
BOTH_TYPES(CROP)
