// index-overflow, C++: the same kernels through the runtime API.

#include "casebook.h"
#include "fill.cuh"
#include "names.h"

#include <type_traits>

using namespace casebook;

static __global__ void fillIntIndex(float *out, long long n) { casebook_fill_int_index(out, n); }
static __global__ void fill64BitIndex(float *out, long long n, long long *last) { casebook_fill_64bit_index(out, n, last); }
static __global__ void countUnset(const float *out, long long n, unsigned long long *unset) {
  casebook_count_unset(out, n, unset);
}

// The control's kernel: fill64BitIndex, but the last block's product is
// recorded as a signed int would hold it.
static __global__ void fillSignedProduct(float *out, long long n, long long *last) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f;
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) *last = (long long)(int)(blockIdx.x * blockDim.x);
}

// What v - (v + 1) gives for x, y and z of each built-in: 2^32 - 1 where
// the component is an unsigned int, -1 where it were signed.
static __global__ void builtinsWrap(long long *wraps) {
  long long *w = wraps;
  *w++ = (long long)(threadIdx.x - (threadIdx.x + 1));
  *w++ = (long long)(threadIdx.y - (threadIdx.y + 1));
  *w++ = (long long)(threadIdx.z - (threadIdx.z + 1));
  *w++ = (long long)(blockIdx.x - (blockIdx.x + 1));
  *w++ = (long long)(blockIdx.y - (blockIdx.y + 1));
  *w++ = (long long)(blockIdx.z - (blockIdx.z + 1));
  *w++ = (long long)(blockDim.x - (blockDim.x + 1));
  *w++ = (long long)(blockDim.y - (blockDim.y + 1));
  *w++ = (long long)(blockDim.z - (blockDim.z + 1));
  *w++ = (long long)(gridDim.x - (gridDim.x + 1));
  *w++ = (long long)(gridDim.y - (gridDim.y + 1));
  *w++ = (long long)(gridDim.z - (gridDim.z + 1));
  // The same reading of a signed int, a copy of blockIdx.x: -1, as the
  // reading gives for a signed value.
  int copy = (int)blockIdx.x;
  *w = (long long)(copy - (copy + 1));
}
static const int kBuiltIns = 12;

static unsigned blocks() { return (unsigned)((kElements + kThreads - 1) / kThreads); }

// ANCHOR: broken
extern "C" int casebook_index_overflow_broken_cpp(const casebook_recorder *r) {
  measure(r, names::ELEMENTS, (double)kElements);
  float *out = nullptr;
  if (rec(r, "cudaMalloc", cudaMalloc((void **)&out, kElements * sizeof(float))) != cudaSuccess) return 1;
  fillIntIndex<<<blocks(), kThreads>>>(out, kElements);  // int index: wraps past 2^31 - 1
  rec(r, "fillIntIndex<<<>>>", cudaGetLastError());
  cudaError_t err = rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  // ANCHOR_END: broken
  rec(r, "cudaFree", cudaFree(out));
  return err;
}

// `signed_product`: the control's one change, the kernel that records the
// last block's product as a signed int would hold it.
static int fill_and_count(const casebook_recorder *r, bool signed_product);

// ANCHOR: fixed
extern "C" int casebook_index_overflow_fixed_cpp(const casebook_recorder *r) {
  return fill_and_count(r, false);
}

static int fill_and_count(const casebook_recorder *r, bool signed_product) {
  measure(r, names::ELEMENTS, (double)kElements);
  float *out = nullptr;
  long long *last = nullptr;
  unsigned long long *unset = nullptr;
  if (rec(r, "cudaMalloc", cudaMalloc((void **)&out, kElements * sizeof(float))) != cudaSuccess) return 1;
  rec(r, "cudaMalloc", cudaMalloc((void **)&last, sizeof(long long)));
  rec(r, "cudaMalloc", cudaMalloc((void **)&unset, sizeof(unsigned long long)));
  rec(r, "cudaMemset", cudaMemset(unset, 0, sizeof(unsigned long long)));
  if (!signed_product) {
    fill64BitIndex<<<blocks(), kThreads>>>(out, kElements, last);  // 64-bit index
    rec(r, "fill64BitIndex<<<>>>", cudaGetLastError());
  } else {
    fillSignedProduct<<<blocks(), kThreads>>>(out, kElements, last);
    rec(r, "fillSignedProduct<<<>>>", cudaGetLastError());
  }
  // ANCHOR_END: fixed
  countUnset<<<blocks(), kThreads>>>(out, kElements, unset);
  rec(r, "countUnset<<<>>>", cudaGetLastError());
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  unsigned long long n_unset = 1;
  long long offset = 0;
  rec(r, "cudaMemcpy (unset)", cudaMemcpy(&n_unset, unset, sizeof n_unset, cudaMemcpyDeviceToHost));
  rec(r, "cudaMemcpy (last block offset)", cudaMemcpy(&offset, last, sizeof offset, cudaMemcpyDeviceToHost));
  check(r, names::EVERY_ELEMENT_WRITTEN, n_unset == 0);
  measure(r, names::LAST_BLOCK_OFFSET, (double)offset);
  // Each built-in's own type, apart from the product's.
  long long *d_wraps = nullptr, wraps[kBuiltIns + 1] = {};
  rec(r, "cudaMalloc", cudaMalloc((void **)&d_wraps, sizeof wraps));
  builtinsWrap<<<1, 1>>>(d_wraps);
  rec(r, "builtinsWrap<<<1, 1>>>", cudaGetLastError());
  rec(r, "cudaMemcpy (the built-ins' wraps)", cudaMemcpy(wraps, d_wraps, sizeof wraps, cudaMemcpyDeviceToHost));
  bool unsigned_all = true;
  for (int i = 0; i < kBuiltIns; ++i) unsigned_all = unsigned_all && wraps[i] == 4294967295LL;
  measure(r, names::AN_INT_COPY_MINUS_ITSELF_PLUS_ONE, (double)wraps[kBuiltIns]);
  measure(r, names::BLOCKIDX_X_MINUS_ITSELF_PLUS_ONE, (double)wraps[3]);
  fact(r, names::EVERY_BUILT_IN_COMPONENT_IS_UNSIGNED, unsigned_all);
  // "Trivial structures", in C++'s sense, as this toolkit's headers declare
  // the two types (dim3 has constructors, uint3 none).
  fact(r, names::UINT3_IS_A_TRIVIAL_TYPE, std::is_trivial<uint3>::value);
  fact(r, names::DIM3_IS_A_TRIVIAL_TYPE, std::is_trivial<dim3>::value);
  fact(r, names::DIM3_IS_TRIVIALLY_COPYABLE, std::is_trivially_copyable<dim3>::value);
  rec(r, "cudaFree", cudaFree(d_wraps));
  fact_text(r, names::PRODUCT_SIGN, offset >= (1LL << 31) ? "positive: unsigned arithmetic" : "negative: it wrapped");
  rec(r, "cudaFree", cudaFree(out));
  rec(r, "cudaFree", cudaFree(last));
  rec(r, "cudaFree", cudaFree(unset));
  return 0;
}

// ANCHOR: signed_product
// The control of "dim3 and uint3 are ... unsigned": the fixed program, its
// kernel recording the last block's blockIdx.x * blockDim.x converted to a
// signed int, as the product would read were the built-ins int.
extern "C" int casebook_index_overflow_signed_product_cpp(const casebook_recorder *r) {
  return fill_and_count(r, true);
}
// ANCHOR_END: signed_product
