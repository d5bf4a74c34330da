// pool-retention, C++: seed 004, example 3, as printed, observed.
//
// Four streams each take 4 MiB from the stream-ordered pool, clear it and
// give it back with cudaFreeAsync; then a cudaMalloc of 32 MiB. The article
// says the frees leave the memory fragmented and not yet available.

#include <iostream>

#include "casebook.h"
#include "names.h"

using namespace casebook;

static const casebook_recorder *g_rec = nullptr;
// Added to the article's program: whether the device is synchronised before
// free memory is read after the frees (the control), and what it read.
static bool g_sync_before_reading = false;
static size_t g_free_after_the_frees = 0;
static unsigned long long g_pool_reserved_after_the_frees = 0;
static unsigned long long g_pool_used_after_the_frees = 0;

// Added: free memory as the device reports it once the frees are issued,
// before the article's program does anything else.
static void read_free_memory_after_the_frees() {
  if (g_sync_before_reading) rec(g_rec, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  g_free_after_the_frees = free_bytes(g_rec);
  // Where the missing memory is: the device's default pool, which
  // cudaMallocAsync drew from, read at the same point.
  cudaMemPool_t pool = nullptr;
  rec(g_rec, "cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, 0));
  rec(g_rec, "cudaMemPoolGetAttribute(ReservedMemCurrent)",
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &g_pool_reserved_after_the_frees));
  rec(g_rec, "cudaMemPoolGetAttribute(UsedMemCurrent)",
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &g_pool_used_after_the_frees));
}

namespace {  // the article's names, kept to this file

// ANCHOR: as_written
int article_main() {
    int num_streams = 4;
    cudaStream_t streams[num_streams];
    
    for (int i = 0; i < num_streams; ++i) {
        rec(g_rec, "cudaStreamCreate", cudaStreamCreate(&streams[i]));
    }

    int size = 1024 * 1024;
    float* device_ptrs[num_streams];

    for (int i = 0; i < num_streams; ++i) {
        cudaError_t err = rec(g_rec, "cudaMallocAsync", cudaMallocAsync(&device_ptrs[i], size * sizeof(float), streams[i]));
        if (err != cudaSuccess) {
          std::cerr << "cudaMallocAsync failed on stream " << i << ". Error: " << cudaGetErrorString(err) << std::endl;
          return 1;
        }
       rec(g_rec, "cudaMemsetAsync", cudaMemsetAsync(device_ptrs[i], 0 , size * sizeof(float), streams[i]));
    }

    for (int i = 0; i < num_streams; ++i) {
        rec(g_rec, "cudaStreamSynchronize", cudaStreamSynchronize(streams[i]));
        rec(g_rec, "cudaFreeAsync", cudaFreeAsync(device_ptrs[i], streams[i]));
    }
    read_free_memory_after_the_frees();  // added: what the device reports now

     for (int i = 0; i < num_streams; ++i) {
        rec(g_rec, "cudaStreamDestroy", cudaStreamDestroy(streams[i]));
    }


    float* large_ptr;
    cudaError_t err = rec(g_rec, "cudaMalloc (large)", cudaMalloc(&large_ptr, 8 * 1024 * 1024 * sizeof(float)));
     if (err != cudaSuccess) {
      std::cerr << "Large allocation failed after streams. Error: " << cudaGetErrorString(err) << std::endl;
      return 1;
    }
    rec(g_rec, "cudaFree (large)", cudaFree(large_ptr));
    return 0;
}
// ANCHOR_END: as_written

}  // namespace

// The article's program, observed: free memory before it, after its frees
// (synchronised first or not), at its end, and after a synchronise.
static int observe(const casebook_recorder *r, bool sync_before_reading) {
  g_rec = r;
  g_sync_before_reading = sync_before_reading;
  rec(r, "cudaFree(0) (creates the context)", cudaFree(0));
  size_t before = free_bytes(r);
  int code = article_main();
  size_t right_after = free_bytes(r);
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  size_t after_sync = free_bytes(r);
  fact(r, names::THE_LARGE_ALLOCATION_SUCCEEDS, code == 0);
  // 16 MiB went back with cudaFreeAsync; less than that missing means they are back.
  fact(r, names::AFTER_A_SYNCHRONISE_THE_FREED_16_MIB_ARE_BACK, before - after_sync < (size_t(16) << 20));
  measure(r, names::FREE_BEFORE, (double)before);
  measure(r, names::FREE_RIGHT_AFTER, (double)right_after);
  measure(r, names::FREE_AFTER_SYNCHRONISE, (double)after_sync);
  measure(r, names::FREE_AFTER_THE_FREES, (double)g_free_after_the_frees);
  // One of the four freed 4 MiB buffers or more still missing.
  fact(r, names::A_FREED_BUFFER_IS_NOT_BACK_AFTER_THE_FREES,
       before >= g_free_after_the_frees + (size_t(4) << 20));
  measure(r, names::POOL_RESERVED_AFTER_THE_FREES, (double)g_pool_reserved_after_the_frees);
  measure(r, names::POOL_USED_AFTER_THE_FREES, (double)g_pool_used_after_the_frees);
  // The freed 16 MiB held by the pool for its own users: reserved, not in use.
  fact(r, names::THE_POOL_HOLDS_THE_FREED_16_MIB_IN_RESERVE,
       g_pool_reserved_after_the_frees >= g_pool_used_after_the_frees + (16ULL << 20));
  return 0;
}

// ANCHOR: observe_as_written
extern "C" int casebook_pool_retention_as_written_cpp(const casebook_recorder *r) {
  return observe(r, false);
}
// ANCHOR_END: observe_as_written

// ANCHOR: synced_before_reading
// The control: the same program, the device synchronised before free memory
// is read after the frees.
extern "C" int casebook_pool_retention_synced_before_reading_cpp(const casebook_recorder *r) {
  return observe(r, true);
}
// ANCHOR_END: synced_before_reading
