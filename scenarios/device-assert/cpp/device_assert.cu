// device-assert, C++: the same lookup through the runtime API.

#include "casebook.h"
#include "gather.cuh"
#include "names.h"

#include <vector>

using namespace casebook;

static __global__ void gatherKernel(float *out, const float *table, const int *index, int n, int table_len) {
  casebook_gather(out, table, index, n, table_len);
}

static std::vector<int> indices(bool past_the_end) {
  std::vector<int> index(kLookups);
  for (int i = 0; i < kLookups; ++i) index[i] = i % kTableLen;
  if (past_the_end) index[kLookups / 2] = kTableLen;
  return index;
}

// One lookup: copies in, launches, synchronises; the assert shows at the synchronisation.
static cudaError_t lookup(const casebook_recorder *r, const std::vector<int> &index, std::vector<float> *result) {
  std::vector<float> table(kTableLen);
  for (int i = 0; i < kTableLen; ++i) table[i] = float(i);
  float *d_table = nullptr, *d_out = nullptr;
  int *d_index = nullptr;
  rec(r, "cudaMalloc (table)", cudaMalloc((void **)&d_table, kTableLen * sizeof(float)));
  rec(r, "cudaMalloc (indices)", cudaMalloc((void **)&d_index, kLookups * sizeof(int)));
  rec(r, "cudaMalloc (out)", cudaMalloc((void **)&d_out, kLookups * sizeof(float)));
  rec(r, "cudaMemcpy (table)", cudaMemcpy(d_table, table.data(), kTableLen * sizeof(float), cudaMemcpyHostToDevice));
  rec(r, "cudaMemcpy (indices)", cudaMemcpy(d_index, index.data(), kLookups * sizeof(int), cudaMemcpyHostToDevice));
  gatherKernel<<<(kLookups + 255) / 256, 256>>>(d_out, d_table, d_index, kLookups, kTableLen);
  rec(r, "gatherKernel<<<>>>", cudaGetLastError());
  cudaError_t err = rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  if (err != cudaSuccess) {
    fact_text(r, names::MESSAGE, cudaGetErrorString(err));
  } else if (result) {
    result->resize(kLookups);
    rec(r, "cudaMemcpy (out)", cudaMemcpy(result->data(), d_out, kLookups * sizeof(float), cudaMemcpyDeviceToHost));
  }
  rec(r, "cudaFree (table)", cudaFree(d_table));
  rec(r, "cudaFree (indices)", cudaFree(d_index));
  rec(r, "cudaFree (out)", cudaFree(d_out));
  return err;
}

// An unrelated call after the lookup: allocate and free 1 MiB.
static void later_call(const casebook_recorder *r) {
  void *p = nullptr;
  cudaError_t err = rec(r, "later call: cudaMalloc", cudaMalloc(&p, 1 << 20));
  if (err == cudaSuccess) err = rec(r, "later call: cudaFree", cudaFree(p));
  fact_text(r, names::LATER_CALL, cudaGetErrorName(err));
}

// The lookup, a later call, then the Programming Guide's remedy; whether
// one index is past the table's end is the broken variant's bug, and the
// control's one change.
static int lookup_then_reset(const casebook_recorder *r, bool past_the_end);

// ANCHOR: broken
extern "C" int casebook_device_assert_broken_cpp(const casebook_recorder *r) {
  return lookup_then_reset(r, true);
}

static int lookup_then_reset(const casebook_recorder *r, bool past_the_end) {
  // BUG: the indices go to the kernel unchecked; one is past the table's end.
  lookup(r, indices(past_the_end), nullptr);
  later_call(r);
  // What the Programming Guide offers: reset the device, then go on.
  rec(r, "cudaDeviceReset", cudaDeviceReset());
  void *p = nullptr;
  cudaError_t err = rec(r, "after reset: cudaMalloc", cudaMalloc(&p, 1 << 20));
  if (err == cudaSuccess) err = rec(r, "after reset: cudaFree", cudaFree(p));
  fact(r, names::AFTER_RESET, err == cudaSuccess);
  return 0;
}
// ANCHOR_END: broken

// ANCHOR: in_range
// The control of "the process must be relaunched": the same program with
// every index within the table, so that no assert fires before the reset.
extern "C" int casebook_device_assert_in_range_cpp(const casebook_recorder *r) {
  return lookup_then_reset(r, false);
}
// ANCHOR_END: in_range

// ANCHOR: fixed
extern "C" int casebook_device_assert_fixed_cpp(const casebook_recorder *r) {
  // FIX: validate on the host, before the kernel can assert.
  auto valid = [](const std::vector<int> &index) {
    for (int k : index)
      if (k < 0 || k >= kTableLen) return false;
    return true;
  };
  check(r, names::REJECTED_ON_HOST, !valid(indices(true)));
  std::vector<int> index = indices(false);
  std::vector<float> out;
  if (valid(index) && lookup(r, index, &out) == cudaSuccess) {
    bool right = true;
    for (int i = 0; i < kLookups; ++i) right = right && out[i] == float(index[i]);
    check(r, names::GATHERED, right);
  }
  later_call(r);
  return 0;
}
// ANCHOR_END: fixed
