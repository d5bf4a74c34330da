// device-heap-exhaustion, C++: seed 003, example 1.
//
// as-written: the article's program exactly, with its `new float[size *
// size]` (an int product that overflows) and uninitialised input. broken and
// fixed: the same pattern at a realistic size, with the default heap and
// without a null check, then with the heap sized and a null check.

#include "casebook.h"
#include "casebook_driver.h"
#include "names.h"
#include "heap.cu"

using namespace casebook;

// What thread 0's `new` was asked for, in floats: recorded by a line added
// to the article's kernel.
__device__ long long g_requested;

// ANCHOR: as_written
__global__ void myKernel(const float *input, float *output, int size) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < size) {
    // Large intermediate array allocation within the kernel
    float *temp = new float[size * size];  // Potential source of error
    if (i == 0) g_requested = size * size;  // added: what new was asked for
    // ... processing using temp ...
    delete[] temp;
    output[i] = input[i] * 2.0f;
  }
}

static int article_main(const casebook_recorder *r, int size) {
  // ... Input data allocation ...
  if (under_sanitizer(r) && size > 64 * 1024) size = 64 * 1024;  // reduced: 64M device allocations take hours there
  float *d_input, *d_output;
  rec(r, "cudaMalloc", cudaMalloc((void **)&d_input, size * sizeof(float)));
  rec(r, "cudaMalloc", cudaMalloc((void **)&d_output, size * sizeof(float)));

  myKernel<<<(size + 255) / 256, 256>>>(d_input, d_output, size);  // Launch Kernel

  // ... Error handling and cleanup ...
  cudaError_t launch = rec(r, "myKernel<<<>>>", cudaGetLastError());
  cudaError_t sync = rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  fact(r, names::THE_ARTICLE_S_KERNEL_RUNS_WITHOUT_ERROR, launch == cudaSuccess && sync == cudaSuccess);
  long long requested = -1;  // added: read back what new was asked for
  rec(r, "cudaMemcpyFromSymbol (g_requested)", cudaMemcpyFromSymbol(&requested, g_requested, sizeof requested));
  measure(r, names::FLOATS_REQUESTED, (double)requested);
  fact(r, names::THE_REQUEST_IS_SIZE_TIMES_SIZE, requested == (long long)size * (long long)size);
  fact(r, names::FLOATS_THE_KERNEL_S_NEW_ASKS_FOR, requested);
  // added: the two buffers as the driver holds them, which the knob sizes too
  PFN_cuMemGetAddressRange_v3020 range = nullptr;
  size_t in_bytes = 0, out_bytes = 0;
  CUdeviceptr base = 0;
  if (driver_entry(r, "cuMemGetAddressRange", 3020, &range) == cudaSuccess) {
    range(&base, &in_bytes, (CUdeviceptr)d_input);
    range(&base, &out_bytes, (CUdeviceptr)d_output);
  }
  measure(r, names::BYTES_OF_EACH_BUFFER, (double)in_bytes);
  fact(r, names::THE_BUFFERS_ARE_SIZE_FLOATS_EACH,
       in_bytes == (size_t)size * sizeof(float) && out_bytes == (size_t)size * sizeof(float));
  rec(r, "cudaFree", cudaFree(d_input));
  rec(r, "cudaFree", cudaFree(d_output));
  return 0;
}

extern "C" int casebook_device_heap_exhaustion_as_written_cpp(const casebook_recorder *r) {
  int size = 1024 * 1024 * 64;  // Adjust to experiment with memory needs
  return article_main(r, size);
}
// ANCHOR_END: as_written

// ANCHOR: size_in_range
// The control of "adjust to experiment with memory needs": the article's
// program with the knob turned down to where size * size fits an int.
extern "C" int casebook_device_heap_exhaustion_size_in_range_cpp(const casebook_recorder *r) {
  int size = 1024 * 16;  // Adjust to experiment with memory needs
  return article_main(r, size);
}
// ANCHOR_END: size_in_range

static int kThreads = 1 << 20;
static const int kFloats = 1024;

static unsigned probe(const casebook_recorder *r, unsigned *d_nulls) {
  unsigned nulls = 0;
  rec(r, "cudaMemset", cudaMemset(d_nulls, 0, sizeof(unsigned)));
  heap_probe<<<(kThreads + 255) / 256, 256>>>(kThreads, kFloats, d_nulls);
  rec(r, "heap_probe<<<>>>", cudaGetLastError());
  rec(r, "cudaMemcpy DtoH", cudaMemcpy(&nulls, d_nulls, sizeof nulls, cudaMemcpyDeviceToHost));
  measure(r, names::NULL_ALLOCATIONS, nulls);
  fact_text(r, names::NULLS, nulls == 0 ? "none" : nulls == (unsigned)kThreads ? "all" : "some");
  return nulls;
}

template <bool kFixed>
static int drive(const casebook_recorder *r) {
  if (under_sanitizer(r)) kThreads = 1 << 16;  // reduced: every store is checked there
  size_t heap = 0;
  rec(r, "cudaDeviceGetLimit cudaLimitMallocHeapSize", cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
  measure(r, names::HEAP_LIMIT_BEFORE, (double)heap);
  char mib[32];
  std::snprintf(mib, sizeof mib, "%zu MiB", heap >> 20);
  fact_text(r, names::HEAP, mib);
  if (kFixed) {
    // ANCHOR: fixed
    int sms = 0, per_sm = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, 0);
    size_t need = (size_t)sms * per_sm * kFloats * sizeof(float) * 4;  // with room for the allocator
    rec(r, "cudaDeviceSetLimit cudaLimitMallocHeapSize", cudaDeviceSetLimit(cudaLimitMallocHeapSize, need));
    // ANCHOR_END: fixed
  }
  float *h_input = new float[kThreads], *h_output = new float[kThreads];
  for (int i = 0; i < kThreads; ++i) h_input[i] = (float)(i % 1000);
  float *d_input, *d_output;
  unsigned *d_nulls;
  rec(r, "cudaMalloc", cudaMalloc((void **)&d_input, kThreads * sizeof(float)));
  rec(r, "cudaMalloc", cudaMalloc((void **)&d_output, kThreads * sizeof(float)));
  rec(r, "cudaMalloc", cudaMalloc((void **)&d_nulls, sizeof(unsigned)));
  rec(r, "cudaMemcpy HtoD", cudaMemcpy(d_input, h_input, kThreads * sizeof(float), cudaMemcpyHostToDevice));
  unsigned nulls = probe(r, d_nulls);
  int status = 0;
  if (kFixed) {
    rec(r, "cudaMemset", cudaMemset(d_nulls, 0, sizeof(unsigned)));
    heap_use_checked<<<(kThreads + 255) / 256, 256>>>(d_input, d_output, kThreads, kFloats, d_nulls);
    rec(r, "heap_use_checked<<<>>>", cudaGetLastError());
    rec(r, "cudaMemcpy DtoH", cudaMemcpy(h_output, d_output, kThreads * sizeof(float), cudaMemcpyDeviceToHost));
    unsigned late = 0;
    rec(r, "cudaMemcpy DtoH", cudaMemcpy(&late, d_nulls, sizeof late, cudaMemcpyDeviceToHost));
    bool right = true;
    for (int i = 0; i < kThreads; ++i) right = right && h_output[i] == h_input[i] * 2.0f;
    check(r, names::NO_THREAD_GETS_NULL, nulls == 0 && late == 0);
    check(r, names::OUTPUT_MATCHES_THE_CPU, right);
  } else {
    heap_use_unchecked<<<(kThreads + 255) / 256, 256>>>(d_input, d_output, kThreads, kFloats);
    rec(r, "heap_use_unchecked<<<>>>", cudaGetLastError());
    cudaError_t err = rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
    status = (int)err;
  }
  rec(r, "cudaFree", cudaFree(d_input));
  rec(r, "cudaFree", cudaFree(d_output));
  rec(r, "cudaFree", cudaFree(d_nulls));
  delete[] h_input;
  delete[] h_output;
  return status;
}

extern "C" int casebook_device_heap_exhaustion_broken_cpp(const casebook_recorder *r) { return drive<false>(r); }

extern "C" int casebook_device_heap_exhaustion_fixed_cpp(const casebook_recorder *r) { return drive<true>(r); }
