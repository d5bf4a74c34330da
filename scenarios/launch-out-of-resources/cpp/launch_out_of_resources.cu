// launch-out-of-resources, C++: the same launches through the runtime API.

#include "casebook.h"
#include "heavy.cuh"
#include "names.h"
#include "spin.cuh"

#include <algorithm>
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

// Whether no block size, a multiple of 32 up to `limit`, keeps more of
// heavyKernel's threads resident on a multiprocessor than `block` does, with
// `smem(b)` bytes of dynamic shared memory a block of b threads, under the
// runtime's occupancy model (cudaOccupancyMaxActiveBlocksPerMultiprocessor).
template <class SharedBytes>
static bool suggested_is_best(const casebook_recorder *r, int block, SharedBytes smem, int limit, const char *label) {
  auto resident = [&](int b, cudaError_t *err) {
    int blocks = 0;
    keep_first_error(*err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, heavyKernel, b, smem(b)));
    return blocks * b;
  };
  cudaError_t err = cudaSuccess;
  int best = 0;
  for (int b = 32; b <= limit; b += 32) best = std::max(best, resident(b, &err));
  int at_suggested = resident(block, &err);
  rec(r, label, err);
  return err == cudaSuccess && at_suggested >= best;
}

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
  // ANCHOR_END: fixed
  // What the occupancy guide says of both its configurators, read under the
  // runtime's own model: the suggested block keeps the most threads
  // resident, with no dynamic shared memory and with 16 bytes of it a
  // thread (the VariableSMem form).
  auto none = [](int) { return size_t(0); };
  auto per_thread = [](int b) { return size_t(b) * 16; };
  int v_grid = 0, v_block = 0;
  rec(r, "cudaOccupancyMaxPotentialBlockSizeVariableSMem",
      cudaOccupancyMaxPotentialBlockSizeVariableSMem(&v_grid, &v_block, heavyKernel, per_thread, 0));
  measure(r, names::BLOCK_VARIABLE_SMEM, v_block);
  int limit = attributes.maxThreadsPerBlock;
  bool best = suggested_is_best(r, block, none, limit, "cudaOccupancyMaxActiveBlocksPerMultiprocessor (each block size)") &&
              suggested_is_best(r, v_block, per_thread, limit,
                                "cudaOccupancyMaxActiveBlocksPerMultiprocessor (each block size, 16 bytes a thread)");
  fact(r, names::SUGGESTED_IS_BEST, best);
  return 0;
}

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

// ANCHOR: occupancy_measured
// The occupancy guide's configurators, measured on the multiprocessors
// rather than read back from the model they are built on. residencyProbe's
// first thread counts its block in and out of the multiprocessor it runs on
// (%smid) and keeps the most blocks that were in at once; every block stays
// for kResidentNs, long enough that the blocks resident together overlap.
// Its dynamic shared memory is what limits how many blocks fit, so the block
// size decides the threads resident.
static const int kSmIds = 1024;                      // more than any %smid
static const unsigned long long kResidentNs = 200000;  // 0.2 ms a block
static const size_t kSharedPerBlock = 40 << 10;      // the fixed form's bytes a block
static const size_t kSharedPerThread = 128;          // the VariableSMem form's bytes a thread

static __global__ void residencyProbe(unsigned *live, unsigned *most) {
  extern __shared__ unsigned char scratch[];
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (threadIdx.x == 0) {
    unsigned now = atomicAdd(&live[sm], 1u) + 1u;
    atomicMax(&most[sm], now);
    scratch[0] = (unsigned char)now;
  }
  __syncthreads();
  casebook_spin_ns(kResidentNs);
  __syncthreads();
  if (threadIdx.x == 0) atomicSub(&live[sm], 1u);
}

// The most blocks of `block` threads, with `shared` bytes of dynamic shared
// memory each, that were resident on one multiprocessor at once.
static int measured_blocks(unsigned *live, unsigned *most, int sms, int block, size_t shared, cudaError_t *err) {
  keep_first_error(*err, cudaMemset(live, 0, kSmIds * sizeof(unsigned)));
  keep_first_error(*err, cudaMemset(most, 0, kSmIds * sizeof(unsigned)));
  // More blocks than every multiprocessor can hold at once (32 each at most).
  residencyProbe<<<sms * 34, block, shared>>>(live, most);
  keep_first_error(*err, cudaGetLastError());
  keep_first_error(*err, cudaDeviceSynchronize());
  std::vector<unsigned> host(kSmIds);
  keep_first_error(*err, cudaMemcpy(host.data(), most, kSmIds * sizeof(unsigned), cudaMemcpyDeviceToHost));
  return (int)*std::max_element(host.begin(), host.end());
}

// The threads resident at `taken`, measured, against those at every block
// size, a multiple of 32 up to the kernel's limit, with `smem(b)` bytes of
// dynamic shared memory a block of b threads; whether the model
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor) gave the blocks measured
// at every size goes to `model_held`.
template <class SharedBytes>
static bool taken_keeps_the_most(const casebook_recorder *r, int taken, SharedBytes smem, int limit, int sms,
                                 SeriesName series, bool *model_held, const char *label) {
  unsigned *live = nullptr, *most = nullptr;
  cudaError_t err = cudaSuccess;
  keep_first_error(err, cudaMalloc((void **)&live, kSmIds * sizeof(unsigned)));
  keep_first_error(err, cudaMalloc((void **)&most, kSmIds * sizeof(unsigned)));
  int best = 0, at_taken = 0;
  for (int b = 32; b <= limit; b += 32) {
    int blocks = measured_blocks(live, most, sms, b, smem(b), &err);
    int modelled = 0;
    keep_first_error(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&modelled, residencyProbe, b, smem(b)));
    *model_held = *model_held && modelled == blocks;
    point(r, series, b, blocks * b);
    best = std::max(best, blocks * b);
    if (b == taken) at_taken = blocks * b;
  }
  if (taken % 32 != 0) at_taken = measured_blocks(live, most, sms, taken, smem(taken), &err) * taken;
  keep_first_error(err, cudaFree(live));
  keep_first_error(err, cudaFree(most));
  rec(r, label, err);
  return err == cudaSuccess && at_taken >= best;
}

// Both configurators' blocks for residencyProbe (the fixed form with 40 KiB
// of dynamic shared memory a block, the VariableSMem form with 128 bytes a
// thread), or, with `fixed_block`, that block for both, each measured.
static int occupancy_measured(const casebook_recorder *r, int fixed_block) {
  int device = 0, sms = 0;
  rec(r, "cudaGetDevice", cudaGetDevice(&device));
  rec(r, "cudaDeviceGetAttribute (multiprocessors)",
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  int optin = 0;
  rec(r, "cudaDeviceGetAttribute (shared memory a block, opt-in)",
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  // The VariableSMem form's larger blocks ask for more than the default 48 KiB.
  rec(r, "cudaFuncSetAttribute (max dynamic shared memory)",
      cudaFuncSetAttribute(residencyProbe, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  cudaFuncAttributes attributes{};
  rec(r, "cudaFuncGetAttributes", cudaFuncGetAttributes(&attributes, residencyProbe));
  int limit = attributes.maxThreadsPerBlock;
  auto per_block = [](int) { return kSharedPerBlock; };
  auto per_thread = [](int b) { return size_t(b) * kSharedPerThread; };
  int grid = 0, block = 0, v_grid = 0, v_block = 0;
  rec(r, "cudaOccupancyMaxPotentialBlockSize",
      cudaOccupancyMaxPotentialBlockSize(&grid, &block, residencyProbe, kSharedPerBlock, 0));
  rec(r, "cudaOccupancyMaxPotentialBlockSizeVariableSMem",
      cudaOccupancyMaxPotentialBlockSizeVariableSMem(&v_grid, &v_block, residencyProbe, per_thread, 0));
  measure(r, names::PROBE_BLOCK, block);
  measure(r, names::PROBE_BLOCK_VARIABLE_SMEM, v_block);
  if (fixed_block > 0) block = v_block = fixed_block;
  measure(r, names::TAKEN_BLOCK, block);
  bool model_held = true;
  // Both forms swept, whatever the first finds.
  bool fixed_form = taken_keeps_the_most(r, block, per_block, limit, sms, names::RESIDENT_THREADS, &model_held,
                                         "residencyProbe<<<>>> (each block size, 40 KiB a block)");
  bool variable_form =
      taken_keeps_the_most(r, v_block, per_thread, limit, sms, names::RESIDENT_THREADS_VARIABLE_SMEM, &model_held,
                           "residencyProbe<<<>>> (each block size, 128 bytes a thread)");
  fact(r, names::TAKEN_KEEPS_THE_MOST_RESIDENT, fixed_form && variable_form);
  fact(r, names::MODEL_GIVES_THE_MEASURED_BLOCKS, model_held);
  return 0;
}

extern "C" int casebook_launch_out_of_resources_occupancy_measured_cpp(const casebook_recorder *r) {
  return occupancy_measured(r, 0);
}
// ANCHOR_END: occupancy_measured

// ANCHOR: occupancy_fixed_block
extern "C" int casebook_launch_out_of_resources_occupancy_fixed_block_cpp(const casebook_recorder *r) {
  return occupancy_measured(r, 96);
}
// ANCHOR_END: occupancy_fixed_block
