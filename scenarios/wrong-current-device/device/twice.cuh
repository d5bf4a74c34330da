// The op of wrong-current-device: doubles each element in place. One copy,
// for the Rust variants' fatbin (twice.cu) and the C++ variants.
#pragma once

__device__ inline void casebook_twice(float *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    data[i] *= 2.0f;
  }
}
