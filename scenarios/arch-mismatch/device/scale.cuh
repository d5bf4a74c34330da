// The kernel every module of this scenario holds: scales a buffer in place.
extern "C" __global__ void scale(float *data, int n, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    data[i] *= factor;
  }
}
