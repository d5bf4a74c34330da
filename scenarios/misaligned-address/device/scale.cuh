// The kernels of misaligned-address, shared by the Rust variants (loaded as a
// fatbin) and the C++ ones (compiled with them).
#pragma once

// Doubles n floats four at a time: each thread loads and stores one float4,
// a single 16-byte instruction, which needs an address that is a multiple
// of 16.
__device__ inline void casebook_scale4(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * i + 3 < n) {
    float4 v = reinterpret_cast<const float4 *>(in)[i];
    v.x *= 2.0f;
    v.y *= 2.0f;
    v.z *= 2.0f;
    v.w *= 2.0f;
    reinterpret_cast<float4 *>(out)[i] = v;
  }
}

// The same, one float per thread: any 4-byte aligned address will do.
__device__ inline void casebook_scale1(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}
