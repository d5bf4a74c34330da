// launch-out-of-resources, C++: the same launches through the runtime API.

#include "casebook.h"
#include "heavy.cuh"
#include "names.h"

#include <cmath>
#include <vector>

using namespace casebook;

static const int kElements = 1 << 16;

static __global__ void heavyKernel(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = casebook_mix(in[i]);
}

static __global__ void scaleKernel(float *data, int n, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

// Runs heavyKernel with `block` threads a block; checks the output against the host when it ran.
static cudaError_t run_heavy(const casebook_recorder *r, int block, const char *label, bool check_output) {
  std::vector<float> in(kElements), out(kElements);
  for (int i = 0; i < kElements; ++i) in[i] = float(i % 100) / 100.0f;
  float *d_in = nullptr, *d_out = nullptr;
  rec(r, "cudaMalloc (in)", cudaMalloc((void **)&d_in, kElements * sizeof(float)));
  rec(r, "cudaMalloc (out)", cudaMalloc((void **)&d_out, kElements * sizeof(float)));
  rec(r, "cudaMemcpy (in)", cudaMemcpy(d_in, in.data(), kElements * sizeof(float), cudaMemcpyHostToDevice));
  heavyKernel<<<(kElements + block - 1) / block, block>>>(d_out, d_in, kElements);
  cudaError_t err = rec(r, label, cudaGetLastError());
  if (err != cudaSuccess) {
    fact_text(r, names::MESSAGE, cudaGetErrorString(err));
  } else {
    err = rec(r, "cudaMemcpy (out)", cudaMemcpy(out.data(), d_out, kElements * sizeof(float), cudaMemcpyDeviceToHost));
    if (check_output && err == cudaSuccess) {
      bool right = true;
      for (int i = 0; i < kElements; ++i) {
        float want = casebook_mix(in[i]);
        right = right && std::fabs(want - out[i]) <= 1e-4f * std::fmax(std::fabs(want), 1.0f);
      }
      check(r, names::RESULTS_RIGHT, right);
    }
  }
  rec(r, "cudaFree (in)", cudaFree(d_in));
  rec(r, "cudaFree (out)", cudaFree(d_out));
  return err;
}

// ANCHOR: broken
extern "C" int casebook_launch_out_of_resources_broken_cpp(const casebook_recorder *r) {
  // BUG: a block size chosen without asking what this kernel can take.
  run_heavy(r, 1024, "heavyKernel<<<, 1024>>>", false);
  cudaError_t later = run_heavy(r, 256, "later: heavyKernel<<<, 256>>>", false);
  fact(r, names::LATER_CALL, later == cudaSuccess);
  return 0;
}
// ANCHOR_END: broken

// ANCHOR: fixed
extern "C" int casebook_launch_out_of_resources_fixed_cpp(const casebook_recorder *r) {
  // FIX: ask the runtime which block this kernel can take.
  int min_grid = 0, block = 0;
  cudaError_t err = rec(r, "cudaOccupancyMaxPotentialBlockSize",
                        cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, heavyKernel, 0, 0));
  if (err != cudaSuccess) return err;
  measure(r, names::BLOCK, block);
  cudaFuncAttributes attributes{};
  rec(r, "cudaFuncGetAttributes", cudaFuncGetAttributes(&attributes, heavyKernel));
  fact(r, names::FITS, block <= attributes.maxThreadsPerBlock);
  run_heavy(r, block, "heavyKernel<<<, suggested block>>>", true);
  return 0;
}
// ANCHOR_END: fixed

// ANCHOR: too_many_threads
extern "C" int casebook_launch_out_of_resources_too_many_threads_cpp(const casebook_recorder *r) {
  float *d_data = nullptr;
  rec(r, "cudaMalloc", cudaMalloc((void **)&d_data, kElements * sizeof(float)));
  // BUG: more threads than a block may have.
  scaleKernel<<<kElements / 2048, 2048>>>(d_data, kElements, 2.0f);
  cudaError_t err = rec(r, "scaleKernel<<<, 2048>>>", cudaGetLastError());
  fact_text(r, names::MESSAGE, cudaGetErrorString(err));
  scaleKernel<<<kElements / 256, 256>>>(d_data, kElements, 2.0f);
  cudaError_t later = rec(r, "later: scaleKernel<<<, 256>>>", cudaGetLastError());
  if (later == cudaSuccess) later = rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  fact(r, names::LATER_CALL, later == cudaSuccess);
  rec(r, "cudaFree", cudaFree(d_data));
  return 0;
}
// ANCHOR_END: too_many_threads
