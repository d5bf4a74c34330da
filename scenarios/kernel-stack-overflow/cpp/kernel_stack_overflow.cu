// kernel-stack-overflow, C++: a recursive kernel, kDepth calls deep, each
// call with a frame of 64 floats and saved registers (ptxas: 568 bytes for
// sm_90), on the per-thread stack's default size.

#include "casebook.h"
#include "names.h"
#include "walk.cuh"

#include <vector>

using namespace casebook;

static const int kDepth = 24;
static const int kThreads = 32;
// Stack allowed per call in the fix, with room over the 568 bytes ptxas reports.
static const size_t kPerCall = 1024;

static __global__ void walkKernel(const float *x, float *out, int depth) { casebook_walks(x, out, depth); }

static cudaError_t walk(const casebook_recorder *r) {
  std::vector<float> x(CASEBOOK_FRAME);
  for (int i = 0; i < CASEBOOK_FRAME; ++i) x[i] = float(i % 7) * 0.5f;
  float *d_x = nullptr, *d_out = nullptr;
  cudaError_t err = rec(r, "cudaMalloc (x)", cudaMalloc((void **)&d_x, x.size() * sizeof(float)));
  if (err == cudaSuccess) err = rec(r, "cudaMalloc (out)", cudaMalloc((void **)&d_out, kThreads * sizeof(float)));
  if (err == cudaSuccess)
    err = rec(r, "cudaMemcpy (x)", cudaMemcpy(d_x, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  measure(r, names::DEPTH_MEASURE, double(kDepth));
  if (err == cudaSuccess) {
    walkKernel<<<1, kThreads>>>(d_x, d_out, kDepth);
    err = rec(r, "walk<<<1, 32>>>", cudaGetLastError());
  }
  if (err == cudaSuccess) err = rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  std::vector<float> got(kThreads);
  if (err == cudaSuccess)
    err = rec(r, "cudaMemcpy (out)", cudaMemcpy(got.data(), d_out, kThreads * sizeof(float), cudaMemcpyDeviceToHost));
  float want = casebook_walk(x.data(), kDepth);  // the same walk on the CPU
  bool same = err == cudaSuccess;
  for (int i = 0; same && i < kThreads; ++i) same = got[i] == want;
  check(r, names::MATCHES, same);
  if (later_call(r, names::LATER_CALL)) {
    cudaFree(d_x);
    cudaFree(d_out);
  }
  return cudaSuccess;
}

static void record_limit(const casebook_recorder *r) {
  size_t limit = 0;
  if (rec(r, "cudaDeviceGetLimit (cudaLimitStackSize)", cudaDeviceGetLimit(&limit, cudaLimitStackSize)) == cudaSuccess)
    measure(r, names::STACK_LIMIT, double(limit));
}

extern "C" int casebook_kernel_stack_overflow_broken_cpp(const casebook_recorder *r) {
  // ANCHOR: broken
  record_limit(r);  // BUG: the default per-thread stack, whatever the recursion needs
  walk(r);
  // ANCHOR_END: broken
  return 0;
}

extern "C" int casebook_kernel_stack_overflow_fixed_cpp(const casebook_recorder *r) {
  // ANCHOR: fixed
  size_t need = size_t(kDepth + 1) * kPerCall;  // FIX: the stack the recursion needs
  rec(r, "cudaDeviceSetLimit (cudaLimitStackSize)", cudaDeviceSetLimit(cudaLimitStackSize, need));
  record_limit(r);
  walk(r);
  // ANCHOR_END: fixed
  return 0;
}
