// oversized-shared-memory, C++: seed 004, example 2.
//
// broken: the article's program as printed, observed. It asks for
// size * sizeof(float) = 4 MiB of dynamic shared memory per block, far over
// what any GPU gives a block, and fills the floats with cudaMemset(…, 1.0f, …).
// fixed: fills the floats with a kernel, opts the kernel in to the most
// dynamic shared memory the GPU allows, tiles the loop to fit, and checks the
// launch. Its output equals the CPU's.

#include <cstring>
#include <iostream>
#include <vector>

#include "casebook.h"
#include "names.h"

using namespace casebook;

namespace {  // the article's names, kept to this file

// ANCHOR: kernel
__global__ void kernel_with_intermediate_buffers(float* input, float* output, int size) {
  extern __shared__ float shared[];
  float* temp_buffer = shared;

    for (int i = threadIdx.x; i < size; i += blockDim.x)
    {
      temp_buffer[i] = input[i] * 2.0f;
      output[i] = temp_buffer[i] + 1.0f;

    }

}
// ANCHOR_END: kernel

}  // namespace

static int max_optin_shared(const casebook_recorder *r) {
  int device = 0, optin = 0;
  rec(r, "cudaGetDevice", cudaGetDevice(&device));
  rec(r, "cudaDeviceGetAttribute (MaxSharedMemoryPerBlockOptin)",
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  measure(r, names::MAX_DYNAMIC_SHARED_BYTES_OPTIN, optin);
  return optin;
}

// The article's program, its `size` given: the broken variant passes the
// article's, the control one whose shared buffer fits a block.
static int article_program(const casebook_recorder *r, int size);

// ANCHOR: broken
extern "C" int casebook_oversized_shared_memory_broken_cpp(const casebook_recorder *r) {
  int size = 1024 * 1024;
  return article_program(r, size);
}

static int article_program(const casebook_recorder *r, int size) {
  size_t free_at_start = free_bytes(r);
  int optin = max_optin_shared(r);
  float *input, *output;
  rec(r, "cudaMalloc", cudaMalloc(&input, size * sizeof(float)));
  rec(r, "cudaMalloc", cudaMalloc(&output, size * sizeof(float)));

  rec(r, "cudaMemset", cudaMemset(input, 1.0f, size*sizeof(float)));

  dim3 block(256);
  dim3 grid((size+block.x-1)/block.x);
  kernel_with_intermediate_buffers<<<grid, block, size * sizeof(float)>>>(input, output, size);
  // ANCHOR_END: broken
  // What the article never asks: did the launch happen, and what is in memory?
  std::vector<float> in(size), before(size), out(size);
  rec(r, "cudaMemcpy DtoH (input)", cudaMemcpy(in.data(), input, size * sizeof(float), cudaMemcpyDeviceToHost));
  char launch_call[96];
  size_t shared_bytes = (size_t)size * sizeof(float);
  std::snprintf(launch_call, sizeof launch_call, "kernel_with_intermediate_buffers<<<grid, block, %zu %s>>> (unchecked)",
                shared_bytes >= (1u << 20) ? shared_bytes >> 20 : shared_bytes >> 10, shared_bytes >= (1u << 20) ? "MiB" : "KiB");
  cudaError_t launch = rec(r, launch_call, cudaGetLastError());
  fact(r, names::THE_REQUESTED_SHARED_MEMORY_EXCEEDS_THE_OPT_IN_MAXIMUM, (long long)size * 4 > optin);
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  rec(r, "cudaMemcpy DtoH (output)", cudaMemcpy(out.data(), output, size * sizeof(float), cudaMemcpyDeviceToHost));
  unsigned bits;
  std::memcpy(&bits, &in[0], sizeof bits);
  char text[64];
  std::snprintf(text, sizeof text, "0x%08x (%.8g)", bits, in[0]);
  fact_text(r, names::CUDAMEMSET_INPUT_1_0F_STORES_EACH_FLOAT_AS, text);
  bool all_same = true;
  for (int i = 0; i < size; ++i) all_same &= std::memcmp(&in[i], &in[0], sizeof(float)) == 0;
  fact(r, names::EVERY_INPUT_FLOAT_HOLDS_THAT_VALUE, all_same);
  bool computed = true;
  for (int i = 0; i < size; ++i) computed &= out[i] == in[i] * 2.0f + 1.0f;
  check(r, names::OUTPUT_HOLDS_INPUT_2_1, computed);
  // ANCHOR: broken_tail
  rec(r, "cudaFree", cudaFree(input));
  rec(r, "cudaFree", cudaFree(output));

  // Large allocation after kernel execution
  float* large_ptr;
    cudaError_t err = rec(r, "cudaMalloc (large)", cudaMalloc(&large_ptr, 8 * 1024 * 1024 * sizeof(float)));
    if (err != cudaSuccess) {
      std::cerr << "Large allocation failed, post kernel execution. Error: " << cudaGetErrorString(err) << std::endl;
      return 1;
    }
    rec(r, "cudaFree (large)", cudaFree(large_ptr));
  // ANCHOR_END: broken_tail
  fact(r, names::THE_PROGRAM_REPORTS_SUCCESS_ALTHOUGH_ITS_LAUNCH_FAILED, launch != cudaSuccess);
  fact(r, names::THE_LARGE_ALLOCATION_AFTER_THE_KERNEL_SUCCEEDS, err == cudaSuccess);
  measure(r, names::FREE_AT_START, (double)free_at_start);
  measure(r, names::FREE_AT_END, (double)free_bytes(r));
  return 0;
}

// ANCHOR: fits
// The control of "a kernel using shared memory as an intermediate buffer":
// the article's program with a size whose buffer, 32 KiB, fits a block
// without opting in (48 KiB).
extern "C" int casebook_oversized_shared_memory_fits_cpp(const casebook_recorder *r) {
  int size = 8 * 1024;
  return article_program(r, size);
}
// ANCHOR_END: fits

// ANCHOR: fixed
static __global__ void fill(float *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = (float)(i % 1000);  // FIX: floats written as floats
}

// FIX: each block stages one tile of `tile` floats, not the whole array.
static __global__ void kernel_tiled(const float *input, float *output, int size, int tile) {
  extern __shared__ float shared[];
  for (int base = blockIdx.x * tile; base < size; base += gridDim.x * tile) {
    int len = min(tile, size - base);
    for (int i = threadIdx.x; i < len; i += blockDim.x) shared[i] = input[base + i] * 2.0f;
    __syncthreads();
    for (int i = threadIdx.x; i < len; i += blockDim.x) output[base + i] = shared[i] + 1.0f;
    __syncthreads();
  }
}

extern "C" int casebook_oversized_shared_memory_fixed_cpp(const casebook_recorder *r) {
  int size = 1024 * 1024;
  float *input, *output;
  if (rec(r, "cudaMalloc", cudaMalloc(&input, size * sizeof(float))) != cudaSuccess) return 1;
  if (rec(r, "cudaMalloc", cudaMalloc(&output, size * sizeof(float))) != cudaSuccess) return 1;
  fill<<<(size + 255) / 256, 256>>>(input, size);
  rec(r, "fill<<<>>>", cudaGetLastError());

  int optin = max_optin_shared(r);  // FIX: ask the GPU, and opt in
  rec(r, "cudaFuncSetAttribute (MaxDynamicSharedMemorySize)",
      cudaFuncSetAttribute(kernel_tiled, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  int tile = optin / (int)sizeof(float);
  dim3 block(256);
  dim3 grid((size + tile - 1) / tile);
  kernel_tiled<<<grid, block, tile * sizeof(float)>>>(input, output, size, tile);
  if (rec(r, "kernel_tiled<<<grid, block, opt-in maximum>>>", cudaGetLastError()) != cudaSuccess) return 1;
  if (rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize()) != cudaSuccess) return 1;
  // ANCHOR_END: fixed
  std::vector<float> out(size);
  rec(r, "cudaMemcpy DtoH (output)", cudaMemcpy(out.data(), output, size * sizeof(float), cudaMemcpyDeviceToHost));
  bool right = true;
  for (int i = 0; i < size; ++i) right &= out[i] == (float)(i % 1000) * 2.0f + 1.0f;
  check(r, names::OUTPUT_HOLDS_INPUT_2_1, right);
  measure(r, names::TILES, (double)grid.x);
  rec(r, "cudaFree", cudaFree(input));
  rec(r, "cudaFree", cudaFree(output));
  return 0;
}

// varying-sizes: what the article worries about, with launches that do run.
// A kernel with a dynamic shared buffer, opted in to the most the GPU
// allows, launched 1200 times with sizes from nothing to that most, each
// launch using its whole buffer. Before and after: the free memory, and
// whether one block of nearly all of it is served.
// ANCHOR: varying_sizes
static __global__ void uses_its_buffer(float *out, int floats) {
  extern __shared__ float buffer[];
  for (int i = threadIdx.x; i < floats; i += blockDim.x) buffer[i] = (float)i;
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = floats > 0 ? buffer[floats - 1] : 0.0f;
}

extern "C" int casebook_oversized_shared_memory_varying_sizes_cpp(const casebook_recorder *r) {
  int optin = max_optin_shared(r);
  if (rec(r, "cudaFuncSetAttribute (MaxDynamicSharedMemorySize)",
          cudaFuncSetAttribute(uses_its_buffer, cudaFuncAttributeMaxDynamicSharedMemorySize, optin)) != cudaSuccess)
    return 1;
  const int kBlocks = 264;
  float *out;
  if (rec(r, "cudaMalloc", cudaMalloc(&out, kBlocks * sizeof(float))) != cudaSuccess) return 1;
  uses_its_buffer<<<kBlocks, 256, 0>>>(out, 0);  // loads the kernel before the baseline
  rec(r, "uses_its_buffer<<<..., 0>>>", cudaGetLastError());
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  size_t before = free_bytes(r);
  measure(r, names::FREE_BEFORE_THE_LAUNCHES, (double)before);
  // Reduced under the sanitizer: racecheck keeps host memory for every
  // launch's shared buffer, and at 100 rounds the process grows past the
  // host's 128 GB until the kernel's OOM killer ends it.
  const bool reduced = under_sanitizer(r);
  const int kSizes = 12, kRounds = reduced ? 5 : 100;
  int launched = 0;
  for (int round = 0; round < kRounds; ++round) {
    Iteration it(r, "a round of launches");
    for (int k = 0; k < kSizes; ++k) {
      int bytes = (int)((long long)optin * ((k * 7) % kSizes) / (kSizes - 1)) / 4 * 4;
      uses_its_buffer<<<kBlocks, 256, bytes>>>(out, bytes / 4);
      if (rec(r, "uses_its_buffer<<<..., varying>>>", cudaGetLastError()) == cudaSuccess) ++launched;
    }
  }
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  size_t after = free_bytes(r);
  measure(r, names::FREE_AFTER_THE_LAUNCHES, (double)after);
  measure(r, names::LAUNCHES, launched);
  fact(r, names::EVERY_LAUNCH_RAN, launched == kSizes * kRounds);
  const size_t kPage = size_t(2) << 20, kSlack = size_t(256) << 20;
  bool unchanged = before > after ? before - after < kPage : true;
  fact(r, names::FREE_MEMORY_IS_UNCHANGED_BY_THE_LAUNCHES, unchanged);
  // Not under the sanitizer, where this trial shares the GPU with others:
  // nearly all free memory is theirs too.
  if (!reduced) {
    void *large = nullptr;
    size_t ask = (after - kSlack) / kPage * kPage;
    cudaError_t err = tolerate(r, "cudaMalloc (nearly all free memory)", cudaMalloc(&large, ask));
    fact(r, names::ONE_BLOCK_OF_NEARLY_ALL_FREE_MEMORY_IS_SERVED_AFTER_THEM, err == cudaSuccess);
    if (err == cudaSuccess) rec(r, "cudaFree", cudaFree(large));
  }
  rec(r, "cudaFree", cudaFree(out));
  return 0;
}
// ANCHOR_END: varying_sizes
