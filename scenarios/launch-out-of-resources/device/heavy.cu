#include "heavy.cuh"

// As the compiler sees fit: about 120 registers a thread.
extern "C" __global__ void heavy(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = casebook_mix(in[i]);
}

// Told it may be launched with 1024 threads a block: the compiler keeps it
// to 64 registers (65536 / 1024) and spills the rest to local memory.
extern "C" __global__ void __launch_bounds__(1024) heavy_bounded(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = casebook_mix(in[i]);
}

// A light kernel that declares it is launched with at most 256 threads a
// block: a launch with more is refused, whatever its registers.
extern "C" __global__ void __launch_bounds__(256) light_bounded(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}

// The same light kernel without a bound: a launch with 512 threads a block
// is within what its registers allow.
extern "C" __global__ void light(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}
