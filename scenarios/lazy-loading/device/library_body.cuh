// The body every kernel of the library runs, by its number: a few hundred
// multiply-adds over one element. Shared by library.cu (1026 kernels) and
// library_used_only.cu (the one the program uses).
#pragma once

template <int N>
__device__ __forceinline__ void casebook_library_body(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
#pragma unroll
  for (int k = 0; k < 128; ++k) v = v * (1.0f + (N + k) * 1e-7f) + (float)(k ^ N) * 1e-6f;
  x[i] = v;
}
