// The kernels of index-overflow, shared by the Rust (device/) and C++
// (cpp/) variants: one thread per element, as most elementwise kernels do.
#pragma once

// Elements: 2^31 + 2^20, past the largest int. 8.6 GB of floats.
static const long long kElements = (1LL << 31) + (1LL << 20);
static const unsigned kThreads = 256;

// ANCHOR: broken
__device__ inline void casebook_fill_int_index(float *out, long long n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;  // BUG: past 2^31 - 1 it wraps negative
  if (i < n) out[i] = 1.0f;
}
// ANCHOR_END: broken

// ANCHOR: fixed
__device__ inline void casebook_fill_64bit_index(float *out, long long n, long long *last_block_offset) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;  // FIX: 64-bit before the product
  if (i < n) out[i] = 1.0f;
  // What the 32-bit product is for the last block (its type decides its sign).
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) *last_block_offset = (long long)(blockIdx.x * blockDim.x);
}
// ANCHOR_END: fixed

__device__ inline void casebook_count_unset(const float *out, long long n, unsigned long long *unset) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && out[i] != 1.0f) atomicAdd(unset, 1ULL);
}
