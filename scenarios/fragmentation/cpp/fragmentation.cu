// fragmentation, C++: seed 004, example 1, and the claim behind it.
//
// as-written: the article's sequence of cudaMalloc/cudaFree of varying sizes,
// then its "large" allocation of 32 MiB.
// hard-form: the harshest test of the claim for cudaMalloc itself. Fill the
// GPU with 2 MiB blocks (the driver's page), free every other one, and ask
// for one block of 90% of the memory that is now free, all of it in
// scattered 2 MiB holes.

#include <iostream>
#include <vector>

#include "casebook.h"
#include "names.h"

using namespace casebook;

static const casebook_recorder *g_rec = nullptr;

namespace {  // the article's names, kept to this file

// ANCHOR: as_written
void allocate_and_free(size_t size) {
  float* device_ptr;
  cudaError_t err = rec(g_rec, "cudaMalloc", cudaMalloc(&device_ptr, size * sizeof(float)));
  if (err != cudaSuccess) {
    std::cerr << "cudaMalloc failed: " << cudaGetErrorString(err) << std::endl;
    return;
  }

  err = rec(g_rec, "cudaMemset", cudaMemset(device_ptr, 0, size * sizeof(float)));
    if (err != cudaSuccess) {
        std::cerr << "cudaMemset failed: " << cudaGetErrorString(err) << std::endl;
        cudaFree(device_ptr);
        return;
  }

  rec(g_rec, "cudaFree", cudaFree(device_ptr));
}

int article_main() {
  // Repeatedly allocate and free different sized chunks
  allocate_and_free(1024);
  allocate_and_free(2048);
  allocate_and_free(1536);
  allocate_and_free(4096);
  allocate_and_free(512);
  allocate_and_free(2048);
  allocate_and_free(1024);

  //Attempt to allocate a large array
  float *large_ptr;
  cudaError_t err = rec(g_rec, "cudaMalloc (large)", cudaMalloc(&large_ptr, 8 * 1024 * 1024 * sizeof(float)));
   if(err != cudaSuccess) {
      std::cerr << "Large allocation failed, despite apparent free space. Error: " << cudaGetErrorString(err) << std::endl;
      return 1;
   }
    rec(g_rec, "cudaFree (large)", cudaFree(large_ptr));

  return 0;
}
// ANCHOR_END: as_written

}  // namespace

extern "C" int casebook_fragmentation_as_written_cpp(const casebook_recorder *r) {
  g_rec = r;
  size_t before = free_bytes(r);
  int code = article_main();
  size_t after = free_bytes(r);
  fact(r, names::THE_LARGE_ALLOCATION_SUCCEEDS, code == 0);
  fact(r, names::FREE_MEMORY_AFTER_EQUALS_FREE_MEMORY_BEFORE, before == after);
  measure(r, names::FREE_BEFORE, (double)before);
  measure(r, names::FREE_AFTER, (double)after);
  return 0;
}

static const size_t kBlock = size_t(2) << 20;

// ANCHOR: hard_form
extern "C" int casebook_fragmentation_hard_form_cpp(const casebook_recorder *r) {
  // Under the sanitizer, a ballast leaves 2 GiB to fill: each cudaMalloc is
  // tracked there, and 40,000 of them would take minutes.
  void *ballast = nullptr;
  if (under_sanitizer(r)) {
    size_t free = free_bytes(r);
    rec(r, "cudaMalloc (ballast)", cudaMalloc(&ballast, (free - (size_t(2) << 30)) / kBlock * kBlock));
  }
  std::vector<void *> blocks;
  cudaError_t refused;
  for (;;) {  // fill the GPU with 2 MiB blocks until cudaMalloc refuses
    void *p;
    refused = cudaMalloc(&p, kBlock);
    if (refused != cudaSuccess) break;
    blocks.push_back(p);
  }
  // The refusal that ends the fill is provoked; any other error is not.
  if (refused == cudaErrorMemoryAllocation) {
    tolerate(r, "cudaMalloc (2 MiB blocks until the GPU is full)", refused);
  } else {
    rec(r, "cudaMalloc (2 MiB blocks until the GPU is full)", refused);
  }
  cudaGetLastError();  // the refusal is not sticky; clear it
  size_t full = free_bytes(r);
  cudaError_t freed = cudaSuccess;
  for (size_t i = 0; i < blocks.size(); i += 2) {  // every other one
    cudaError_t e = cudaFree(blocks[i]);
    if (freed == cudaSuccess) freed = e;
  }
  rec(r, "cudaFree (every other block)", freed);
  size_t scattered = free_bytes(r);
  size_t request = (scattered - full) / 10 * 9 / kBlock * kBlock;  // 90% of the holes
  void *large = nullptr;
  cudaError_t err = rec(r, "cudaMalloc (90% of the scattered free memory)", cudaMalloc(&large, request));
  // ANCHOR_END: hard_form
  size_t largest = err == cudaSuccess ? request : 0;
  if (err != cudaSuccess) {  // find what it does serve
    cudaGetLastError();
    for (size_t ask = request / 2 / kBlock * kBlock; ask >= kBlock; ask = ask / 2 / kBlock * kBlock) {
      void *p;
      if (cudaMalloc(&p, ask) == cudaSuccess) {
        cudaFree(p);
        largest = ask;
        break;
      }
      cudaGetLastError();
    }
  }
  measure(r, names::BLOCKS_FILLED, (double)blocks.size());
  measure(r, names::FREE_BYTES_SCATTERED, (double)(scattered - full));
  measure(r, names::LARGEST_REQUEST_SERVED, (double)largest);
  fact(r, names::ONE_BLOCK_OF_90_OF_THE_SCATTERED_FREE_MEMORY_IS_SERVED, err == cudaSuccess);
  cudaError_t rest = large ? cudaFree(large) : cudaSuccess;
  for (size_t i = 1; i < blocks.size(); i += 2) {
    cudaError_t e = cudaFree(blocks[i]);
    if (rest == cudaSuccess) rest = e;
  }
  if (ballast) {
    cudaError_t e = cudaFree(ballast);
    if (rest == cudaSuccess) rest = e;
  }
  rec(r, "cudaFree (the rest)", rest);
  return 0;
}
