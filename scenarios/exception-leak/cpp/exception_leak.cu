// exception-leak, C++ variants: seed 002, example 1, made complete.
//
// The article's try block allocates 1 GB, computes with it and frees it; a
// throw from the computation jumps to the catch, which logs and goes on.
// The broken call is that code; the fixed call owns the pointer with a
// unique_ptr whose deleter is cudaFree, and changes nothing else.

#include <cmath>
#include <memory>
#include <stdexcept>

#include "casebook.h"
#include "names.h"

using namespace casebook;

static const size_t kBatch = 1024 * 1024;
static const size_t kTolerance = size_t(64) << 20;
static const int kCalls = 8;

static __global__ void doubleKernel(float *data, int size) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < size) data[i] *= 2.0f;
}

// "...some computation using dev_ptr...": it throws on a batch with a NaN.
static void compute(const casebook_recorder *r, float *dev_ptr, const float *batch) {
  rec(r, "cudaMemcpy HtoD", cudaMemcpy(dev_ptr, batch, kBatch * sizeof(float), cudaMemcpyHostToDevice));
  for (size_t i = 0; i < kBatch; ++i) {
    if (std::isnan(batch[i])) throw std::runtime_error("the batch contains NaN");
  }
  doubleKernel<<<(kBatch + 255) / 256, 256>>>(dev_ptr, (int)kBatch);
  rec(r, "doubleKernel<<<>>>", cudaGetLastError());
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
}

// ANCHOR: broken
static bool model_call_broken(const casebook_recorder *r, const float *batch) {
  cudaError_t err;
  float *dev_ptr;
  size_t size = 1024 * 1024 * 1024; // 1GB

  try {
    err = rec(r, "cudaMalloc", cudaMalloc((void **)&dev_ptr, size));
    if (err != cudaSuccess) {
      throw std::runtime_error("cudaMalloc failed");
    }
    compute(r, dev_ptr, batch);  // ...some computation using dev_ptr...
    rec(r, "cudaFree", cudaFree(dev_ptr));
    return true;
  } catch (const std::runtime_error &e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    // Missing cudaFree(dev_ptr)
    return false;
  }
}
// ANCHOR_END: broken

// ANCHOR: fixed
struct DeviceFree {
  const casebook_recorder *r;
  void operator()(float *p) const { rec(r, "cudaFree", cudaFree(p)); }
};

static bool model_call_fixed(const casebook_recorder *r, const float *batch) {
  cudaError_t err;
  float *raw;
  size_t size = 1024 * 1024 * 1024; // 1GB

  try {
    err = rec(r, "cudaMalloc", cudaMalloc((void **)&raw, size));
    if (err != cudaSuccess) {
      throw std::runtime_error("cudaMalloc failed");
    }
    std::unique_ptr<float, DeviceFree> dev_ptr(raw, DeviceFree{r});  // FIX: freed on every path
    compute(r, dev_ptr.get(), batch);
    return true;
  } catch (const std::runtime_error &e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    return false;
  }
}
// ANCHOR_END: fixed

static int drive(const casebook_recorder *r, bool (*call)(const casebook_recorder *, const float *)) {
  float *batch = new float[kBatch];
  int failed = 0;
  long long lost = 0;
  for (int c = 0; c < kCalls; ++c) {
    bool bad = c % 2 == 1;
    for (size_t i = 0; i < kBatch; ++i) batch[i] = (float)i;
    if (bad) batch[7] = NAN;
    size_t before, after;
    bool ok;
    {
      Iteration it(r, "model call");
      before = free_bytes(r);
      ok = call(r, batch);
      after = free_bytes(r);
    }
    point(r, names::FREE_BYTES, c + 1, (double)after);
    check(r, names::GOOD_BATCHES_SUCCEED_BAD_ONES_FAIL, ok == !bad);
    if (!ok) {
      ++failed;
      lost += (long long)before - (long long)after;
    }
  }
  delete[] batch;
  measure(r, names::FAILED_CALLS_COUNT, failed);
  measure(r, names::BYTES_LOST, (double)lost);
  fact(r, names::FAILED_CALLS, (long long)failed);
  long long per = lost / (failed > 0 ? failed : 1);
  long long tol = (long long)kTolerance;
  fact_text(r, names::LEAK_PER_FAILURE,
            llabs(per) < tol                              ? "nothing"
            : llabs(per - (1LL << 30)) < tol              ? "exactly one allocation"
                                                          : "something other than one allocation");
  check(r, names::NO_LEAK, llabs(lost) < tol);
  return 0;
}

extern "C" int casebook_exception_leak_broken_cpp(const casebook_recorder *r) {
  return drive(r, model_call_broken);
}

extern "C" int casebook_exception_leak_fixed_cpp(const casebook_recorder *r) {
  return drive(r, model_call_fixed);
}
