// sticky-error, C++: seed 000, example 2, made complete and run as written.
//
// runModel(context1), cudaDeviceReset(), runModel(context2): the article's
// "proper context management". The first model call here has a kernel that
// faults; the question is whether the reset gives the second one a clean
// context.

#include "casebook.h"
#include "names.h"

using namespace casebook;

static __global__ void faultingKernel() { *(volatile int *)nullptr = 1; }

static __global__ void scaleKernel(float *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= 2.0f;
}

// A model call; `faulty` gives it the bug.
static cudaError_t runModel(const casebook_recorder *r, bool faulty) {
  const int n = 1 << 20;
  float *d_data = nullptr;
  cudaError_t err = faulty ? tolerate(r, "cudaMalloc", cudaMalloc((void **)&d_data, n * sizeof(float)))
                           : rec(r, "cudaMalloc", cudaMalloc((void **)&d_data, n * sizeof(float)));
  if (err != cudaSuccess) return err;
  if (faulty) {
    faultingKernel<<<1, 32>>>();
    tolerate(r, "faultingKernel<<<>>>", cudaGetLastError());
    err = tolerate(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
    tolerate(r, "cudaFree", cudaFree(d_data));
  } else {
    scaleKernel<<<(n + 255) / 256, 256>>>(d_data, n);
    rec(r, "scaleKernel<<<>>>", cudaGetLastError());
    err = rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
    rec(r, "cudaFree", cudaFree(d_data));
  }
  return err;
}

// ANCHOR: as_written
extern "C" int casebook_sticky_error_as_written_cpp(const casebook_recorder *r) {
  int mode = -1;  // added: the compute mode, which cudaErrorDevicesUnavailable can stem from
  rec(r, "cudaDeviceGetAttribute (compute mode)", cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, 0));
  fact_text(r, names::COMPUTE_MODE, mode == cudaComputeModeDefault ? "default" : mode == cudaComputeModeExclusiveProcess ? "exclusive process" : mode == cudaComputeModeProhibited ? "prohibited" : "other");
  {
    Iteration it(r, "first model call");
    runModel(r, true);  // First model call
  }
  cudaError_t reset = rec(r, "cudaDeviceReset", cudaDeviceReset());  // Reset CUDA context
  fact_text(r, names::RESET_RETURNS, cudaGetErrorName(reset));
  cudaError_t second;
  {
    Iteration it(r, "second model call");
    second = runModel(r, false);  // Second model call
  }
  fact_text(r, names::SECOND, cudaGetErrorName(second));
  fact(r, names::AFTER_RESET, second == cudaSuccess);
  return 0;
}
// ANCHOR_END: as_written
