// device-reset, C++: seed 002's example 2 ("cudaFree(nullptr); cudaDeviceReset();")
// and seed 000's example 2 (cudaDeviceReset between model calls), measured.
//
// The process holds memory the way a real one does: buffers of its own through
// the runtime (cudaMalloc's live in the device's primary context; a block of
// the stream-ordered pool belongs to no context), and a library that
// created a context of its own through the driver API and allocated in it.
// broken: "cleans up" as the articles do, with cudaFree(nullptr) and
// cudaDeviceReset(). fixed: frees what it allocated and has the library
// destroy its context. Free memory is read with cudaMemGetInfo throughout.

#include <vector>

#include "casebook_driver.h"
#include "names.h"

using namespace casebook;

namespace {

const size_t kBuffer = 4ull << 30;      // the process's own buffer
const size_t kLibrary = 4ull << 30;     // what the library allocates in its context
const size_t kHeap = 256ull << 20;      // a device-heap limit the process raised
const size_t kTolerance = 128ull << 20; // context bookkeeping, rounding
const size_t kMargin = 512ull << 20;    // left free after the reset, for the context's own needs

// The driver API, reached through the runtime so that nothing links libcuda.
struct Driver {
  PFN_cuCtxCreate_v3020 ctxCreate = nullptr;
  PFN_cuCtxDestroy_v4000 ctxDestroy = nullptr;
  PFN_cuCtxPushCurrent_v4000 ctxPush = nullptr;
  PFN_cuCtxPopCurrent_v4000 ctxPop = nullptr;
  PFN_cuMemAlloc_v3020 memAlloc = nullptr;
  PFN_cuMemFree_v3020 memFree = nullptr;
  PFN_cuMemsetD32_v3020 memsetD32 = nullptr;
  PFN_cuCtxSynchronize_v2000 ctxSync = nullptr;
  PFN_cuGetErrorName_v6000 errorName = nullptr;
};

bool load(const casebook_recorder *r, Driver &d) {
  return driver_entry(r, "cuGetErrorName", 6000, &d.errorName) == cudaSuccess &&
         driver_entry(r, "cuCtxCreate", 3020, &d.ctxCreate) == cudaSuccess &&
         driver_entry(r, "cuCtxDestroy", 4000, &d.ctxDestroy) == cudaSuccess &&
         driver_entry(r, "cuCtxPushCurrent", 4000, &d.ctxPush) == cudaSuccess &&
         driver_entry(r, "cuCtxPopCurrent", 4000, &d.ctxPop) == cudaSuccess &&
         driver_entry(r, "cuMemAlloc", 3020, &d.memAlloc) == cudaSuccess &&
         driver_entry(r, "cuMemFree", 3020, &d.memFree) == cudaSuccess &&
         driver_entry(r, "cuMemsetD32", 3020, &d.memsetD32) == cudaSuccess &&
         driver_entry(r, "cuCtxSynchronize", 2000, &d.ctxSync) == cudaSuccess;
}

// A library that keeps a context of its own, as some do; or, in the control,
// one that allocates in the context current when it is called, the
// primary one, as cuBLAS does.
enum class LibraryContext { Own, Primary };

struct Library {
  CUcontext ctx = nullptr;
  CUdeviceptr buffer = 0;
};

bool library_init(const casebook_recorder *r, const Driver &d, Library &lib, LibraryContext where) {
  if (where == LibraryContext::Primary)
    return rec_cu(r, d.errorName, "cuMemAlloc", d.memAlloc(&lib.buffer, kLibrary)) == CUDA_SUCCESS;
  if (rec_cu(r, d.errorName, "cuCtxCreate", d.ctxCreate(&lib.ctx, 0, 0)) != CUDA_SUCCESS) return false;
  if (rec_cu(r, d.errorName, "cuMemAlloc", d.memAlloc(&lib.buffer, kLibrary)) != CUDA_SUCCESS) return false;
  CUcontext popped;
  return rec_cu(r, d.errorName, "cuCtxPopCurrent", d.ctxPop(&popped)) == CUDA_SUCCESS;
}

void library_teardown(const casebook_recorder *r, const Driver &d, Library &lib) {
  CUcontext popped;
  rec_cu(r, d.errorName, "cuCtxPushCurrent", d.ctxPush(lib.ctx));
  rec_cu(r, d.errorName, "cuMemFree", d.memFree(lib.buffer));
  rec_cu(r, d.errorName, "cuCtxPopCurrent", d.ctxPop(&popped));
  rec_cu(r, d.errorName, "cuCtxDestroy", d.ctxDestroy(lib.ctx));
}

// What the process holds beyond where it started.
size_t held(size_t baseline, size_t free) { return free >= baseline ? 0 : baseline - free; }

struct Setup {
  size_t baseline = 0, default_heap = 0, raised_heap = 0;
  float *buffer = nullptr;
  Library lib;
};

// Where the process's own buffer comes from: cudaMalloc, as in the articles,
// or, in a control, the device's stream-ordered pool (cudaMallocAsync).
enum class Buffer { Malloc, Pool };

bool setup(const casebook_recorder *r, const Driver &d, Setup &s, LibraryContext where = LibraryContext::Own,
           Buffer buffer = Buffer::Malloc) {
  rec(r, "cudaFree(0)", cudaFree(0));  // the primary context, as any first call creates it
  s.baseline = free_bytes(r);
  rec(r, "cudaDeviceGetLimit cudaLimitMallocHeapSize", cudaDeviceGetLimit(&s.default_heap, cudaLimitMallocHeapSize));
  if (buffer == Buffer::Pool) {
    if (rec(r, "cudaMallocAsync", cudaMallocAsync((void **)&s.buffer, kBuffer, 0)) != cudaSuccess) return false;
    rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(0));
  } else if (rec(r, "cudaMalloc", cudaMalloc((void **)&s.buffer, kBuffer)) != cudaSuccess) {
    return false;
  }
  rec(r, "cudaDeviceSetLimit cudaLimitMallocHeapSize", cudaDeviceSetLimit(cudaLimitMallocHeapSize, kHeap));
  // Read back: the reset's effect on the limit means something only if it changed.
  rec(r, "cudaDeviceGetLimit cudaLimitMallocHeapSize", cudaDeviceGetLimit(&s.raised_heap, cudaLimitMallocHeapSize));
  if (!library_init(r, d, s.lib, where)) return false;
  size_t now = free_bytes(r);
  measure(r, names::BASELINE_FREE, (double)s.baseline);
  measure(r, names::HELD_AFTER_SETUP, (double)held(s.baseline, now));
  return true;
}

void judge_cleanup(const casebook_recorder *r, const Setup &s) {
  size_t after = held(s.baseline, free_bytes(r));
  measure(r, names::HELD_AFTER_CLEANUP, (double)after);
  check(r, names::BACK, after < kTolerance);
}

// The articles' cleanup, with the library's memory in a context of its own
// (the broken variant) or in the primary context (the control).
int reset_cleanup(const casebook_recorder *r, LibraryContext where, Buffer buffer = Buffer::Malloc);

}  // namespace

// ANCHOR: broken
extern "C" int casebook_device_reset_broken_cpp(const casebook_recorder *r) {
  return reset_cleanup(r, LibraryContext::Own);
}

namespace {

// Runs `call` in the context the library's buffer was made in: its own,
// pushed for the call, or the primary one, current already. False where the
// push is refused.
template <typename Call>
bool in_library_context(const casebook_recorder *r, const Driver &d, const Library &lib, Call call) {
  CUcontext popped;
  if (lib.ctx &&
      tolerate_cu(r, d.errorName, "cuCtxPushCurrent (the library's context)", d.ctxPush(lib.ctx)) != CUDA_SUCCESS)
    return false;
  bool done = call();
  if (lib.ctx) rec_cu(r, d.errorName, "cuCtxPopCurrent", d.ctxPop(&popped));
  return done;
}

// A write of `words` words at `at` through the driver, then the current
// context synchronised: whether both are accepted.
bool written(const casebook_recorder *r, const Driver &d, const char *call, CUdeviceptr at, size_t words) {
  CUresult used = tolerate_cu(r, d.errorName, call, d.memsetD32(at, 0, words));
  if (used == CUDA_SUCCESS) used = tolerate_cu(r, d.errorName, "cuCtxSynchronize (after the write)", d.ctxSync());
  return used == CUDA_SUCCESS;
}

// The library's buffer written after the reset, in the context it was made
// in (the primary one the reset has reset and the runtime initialised
// again). Usable: the write is accepted and completes.
bool library_buffer_usable(const casebook_recorder *r, const Driver &d, const Library &lib) {
  return in_library_context(
      r, d, lib, [&] { return written(r, d, "cuMemsetD32 (the library's buffer, after the reset)", lib.buffer, 1); });
}

// A new call after the reset, in the primary context (through the runtime,
// which initialises it again at its first call) or in the library's: a
// small buffer allocated, written and freed, the context synchronised.
const size_t kNewCall = 1ull << 20;

bool primary_takes_a_new_call(const casebook_recorder *r) {
  void *fresh = nullptr;
  cudaError_t got = tolerate(r, "cudaMalloc (a new call, after the reset)", cudaMalloc(&fresh, kNewCall));
  if (got != cudaSuccess) return false;
  cudaError_t used = tolerate(r, "cudaMemset (the new buffer)", cudaMemset(fresh, 0, kNewCall));
  if (used == cudaSuccess) used = tolerate(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  rec(r, "cudaFree (the new buffer)", cudaFree(fresh));
  return used == cudaSuccess;
}

bool library_takes_a_new_call(const casebook_recorder *r, const Driver &d, const Library &lib) {
  return in_library_context(r, d, lib, [&] {
    CUdeviceptr fresh = 0;
    if (tolerate_cu(r, d.errorName, "cuMemAlloc (a new call, after the reset)", d.memAlloc(&fresh, kNewCall)) !=
        CUDA_SUCCESS)
      return false;
    bool done = written(r, d, "cuMemsetD32 (the new buffer)", fresh, kNewCall / 4);
    rec_cu(r, d.errorName, "cuMemFree (the new buffer)", d.memFree(fresh));
    return done;
  });
}

int reset_cleanup(const casebook_recorder *r, LibraryContext where, Buffer buffer) {
  Driver d;
  Setup s;
  if (!load(r, d) || !setup(r, d, s, where, buffer)) return 1;
  size_t before = held(s.baseline, free_bytes(r));

  rec(r, "cudaFree(nullptr)", cudaFree(nullptr));  // This doesn't actually free anything.
  size_t after_free_null = held(s.baseline, free_bytes(r));

  rec(r, "cudaDeviceReset", cudaDeviceReset());  // Attempting to reset the context is not always enough.
  size_t after_reset = held(s.baseline, free_bytes(r));
  // ANCHOR_END: broken

  measure(r, names::HELD_BEFORE_FREE_NULL, (double)before);
  measure(r, names::HELD_AFTER_FREE_NULL, (double)after_free_null);
  measure(r, names::HELD_AFTER_RESET, (double)after_reset);
  fact(r, names::FREE_NULL, before > after_free_null + kTolerance);

  // Each allocation read on its own, then with the memory held: the
  // runtime's is released where its pointer is refused and the memory held
  // fell by about its size; the library's survived where its buffer can
  // still be written and the memory held still covers it.
  cudaError_t old = tolerate(r, "cudaMemset (the pointer from before the reset)", cudaMemset(s.buffer, 0, 4));
  fact_text(r, names::THE_POINTER_FROM_BEFORE_THE_RESET, cudaGetErrorName(old));
  bool usable = library_buffer_usable(r, d, s.lib);
  fact(r, names::THE_LIBRARY_S_BUFFER_IS_USABLE_AFTER_THE_RESET, usable);
  // Each context the first call worked in, reused: a new buffer allocated,
  // written and freed in it after the reset.
  fact(r, names::THE_PRIMARY_CONTEXT_TAKES_A_NEW_CALL_AFTER_THE_RESET, primary_takes_a_new_call(r));
  fact(r, names::THE_LIBRARY_S_CONTEXT_TAKES_A_NEW_CALL_AFTER_THE_RESET, library_takes_a_new_call(r, d, s.lib));
  fact(r, names::RESET, old != cudaSuccess && after_free_null > after_reset + kBuffer * 9 / 10);
  fact(r, names::SURVIVED, usable && after_reset + kTolerance > kLibrary);
  size_t heap = 0;
  rec(r, "cudaDeviceGetLimit cudaLimitMallocHeapSize", cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
  fact(r, names::THE_DEVICE_HEAP_LIMIT_IS_BACK_TO_ITS_DEFAULT, heap == s.default_heap);
  fact(r, names::THE_DEVICE_HEAP_LIMIT_HAD_BEEN_RAISED, s.raised_heap > s.default_heap);

  // What the reset released, asked for in one piece: all the free memory
  // but a margin for the context's own needs.
  // Not under the sanitizer, where this trial shares the GPU: the free
  // memory is the other trials' too.
  if (!under_sanitizer(r)) {
    size_t free = free_bytes(r);
    void *whole = nullptr;
    cudaError_t one_piece = tolerate(r, "cudaMalloc (free memory less 512 MiB, after the reset)",
                                     cudaMalloc(&whole, free - kMargin));
    fact(r, names::ONE_BLOCK_OF_NEARLY_ALL_FREE_MEMORY_IS_SERVED_AFTER_THE_RESET, one_piece == cudaSuccess);
    if (one_piece == cudaSuccess) rec(r, "cudaFree", cudaFree(whole));
  }

  judge_cleanup(r, s);
  return 0;  // the library's context stays behind until the process exits
}

}  // namespace

// ANCHOR: library_in_primary
// The control of what the reset leaves: the same program, the library
// allocating in the primary context rather than in one of its own.
extern "C" int casebook_device_reset_library_in_primary_cpp(const casebook_recorder *r) {
  return reset_cleanup(r, LibraryContext::Primary);
}
// ANCHOR_END: library_in_primary

// ANCHOR: buffer_from_pool
// The control of what the reset releases: the same program, the process's
// own buffer taken from the device's stream-ordered pool (cudaMallocAsync)
// rather than with cudaMalloc.
extern "C" int casebook_device_reset_buffer_from_pool_cpp(const casebook_recorder *r) {
  return reset_cleanup(r, LibraryContext::Own, Buffer::Pool);
}
// ANCHOR_END: buffer_from_pool

// ANCHOR: library_in_primary_buffer_from_pool
// Everything the process makes through the primary context: the library's
// buffer allocated in it, and the process's own buffer from the device's
// stream-ordered pool, asked on its stream.
extern "C" int casebook_device_reset_library_in_primary_buffer_from_pool_cpp(const casebook_recorder *r) {
  return reset_cleanup(r, LibraryContext::Primary, Buffer::Pool);
}
// ANCHOR_END: library_in_primary_buffer_from_pool

// ANCHOR: fixed
extern "C" int casebook_device_reset_fixed_cpp(const casebook_recorder *r) {
  Driver d;
  Setup s;
  if (!load(r, d) || !setup(r, d, s)) return 1;

  rec(r, "cudaFree", cudaFree(s.buffer));  // free what the process allocated
  library_teardown(r, d, s.lib);           // and have the library release its context
  // ANCHOR_END: fixed

  judge_cleanup(r, s);
  return 0;
}

// ANCHOR: pool_across_reset
// What cudaDeviceReset does to the stream-ordered pool: a 1 GiB block from
// the device's default pool, left allocated, then the reset. Is the block's
// memory back in the device's free memory after it, and after the pool is
// trimmed? And does the block's pointer still work? (Last: if it faults, it
// ends the run.)
extern "C" int casebook_device_reset_pool_across_reset_cpp(const casebook_recorder *r) {
  const size_t kPool = 1ull << 30;
  rec(r, "cudaFree(0)", cudaFree(0));  // the primary context, as any first call creates it
  size_t baseline = free_bytes(r);
  void *block = nullptr;
  if (rec(r, "cudaMallocAsync (1 GiB, left allocated)", cudaMallocAsync(&block, kPool, 0)) != cudaSuccess) return 1;
  rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(0));
  size_t before = held(baseline, free_bytes(r));

  rec(r, "cudaDeviceReset", cudaDeviceReset());
  size_t after = held(baseline, free_bytes(r));
  cudaMemPool_t pool = nullptr;
  rec(r, "cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, 0));
  rec(r, "cudaMemPoolTrimTo (0)", cudaMemPoolTrimTo(pool, 0));
  size_t trimmed = held(baseline, free_bytes(r));
  // ANCHOR_END: pool_across_reset

  measure(r, names::POOL_HELD_BEFORE_THE_RESET, (double)before);
  measure(r, names::POOL_HELD_AFTER_THE_RESET, (double)after);
  measure(r, names::POOL_HELD_AFTER_TRIMMING, (double)trimmed);
  fact(r, names::THE_POOL_BLOCK_IS_HELD_BEFORE_THE_RESET, before + kTolerance >= kPool);
  fact(r, names::THE_POOL_BLOCK_IS_BACK_AFTER_THE_RESET, after < kTolerance);
  fact(r, names::THE_POOL_BLOCK_IS_BACK_AFTER_TRIMMING_THE_POOL, trimmed < kTolerance);
  cudaError_t used = tolerate(r, "cudaMemset (the pool's block, after the reset)", cudaMemset(block, 0, 4));
  if (used == cudaSuccess) used = tolerate(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  fact_text(r, names::THE_POOL_BLOCK_AFTER_THE_RESET, cudaGetErrorName(used));
  return 0;
}

// Seed 003's "while such functions release memory, they don't guarantee a
// contiguous block of sufficient size will become available", where they
// could fail to: blocks of 2 MiB fill the GPU in turn, one through the
// runtime (the primary context's), one through the library, so that what
// the reset releases lies in 2 MiB pieces between the library's blocks.
// Then one block of all the free memory but 512 MiB. The library's blocks
// are in a context of its own, or (the control) in the primary context,
// which the reset destroys. (Not under the sanitizer, where the GPU is
// shared.)
namespace {
int fragmented_reset(const casebook_recorder *r, LibraryContext where);
}  // namespace

// ANCHOR: fragmented_reset
extern "C" int casebook_device_reset_fragmented_reset_cpp(const casebook_recorder *r) {
  return fragmented_reset(r, LibraryContext::Own);
}

// ANCHOR: fragmented_reset_library_in_primary
// The control of what the reset leaves of a library's memory: the same
// filling, the library's blocks allocated in the primary context.
extern "C" int casebook_device_reset_fragmented_reset_library_in_primary_cpp(const casebook_recorder *r) {
  return fragmented_reset(r, LibraryContext::Primary);
}
// ANCHOR_END: fragmented_reset_library_in_primary

namespace {

int fragmented_reset(const casebook_recorder *r, LibraryContext where) {
  const size_t kPiece = 2ull << 20;
  if (under_sanitizer(r)) return 0;
  Driver d;
  if (!load(r, d)) return 1;
  rec(r, "cudaFree(0)", cudaFree(0));
  Library lib;
  CUcontext popped;
  if (where == LibraryContext::Own) {
    if (rec_cu(r, d.errorName, "cuCtxCreate", d.ctxCreate(&lib.ctx, 0, 0)) != CUDA_SUCCESS) return 1;
    rec_cu(r, d.errorName, "cuCtxPopCurrent", d.ctxPop(&popped));
  }
  size_t baseline = free_bytes(r);
  std::vector<CUdeviceptr> library_blocks;
  size_t runtime_blocks = 0;
  for (;;) {
    void *mine = nullptr;
    if (cudaMalloc(&mine, kPiece) != cudaSuccess) break;  // the runtime's, in the primary context
    ++runtime_blocks;
    CUdeviceptr theirs = 0;
    if (lib.ctx) d.ctxPush(lib.ctx);
    CUresult made = d.memAlloc(&theirs, kPiece);  // the library's, in its context
    if (lib.ctx) d.ctxPop(&popped);
    if (made != CUDA_SUCCESS) break;
    library_blocks.push_back(theirs);
  }
  cudaGetLastError();  // the refusal that ends the filling
  measure(r, names::RUNTIME_BLOCKS_BEFORE_THE_RESET, (double)runtime_blocks);
  measure(r, names::LIBRARY_BLOCKS_BEFORE_THE_RESET, (double)library_blocks.size());

  rec(r, "cudaDeviceReset", cudaDeviceReset());  // releases the primary context's blocks
  size_t free = free_bytes(r);
  measure(r, names::FREE_AFTER_THE_RESET, (double)free);
  void *whole = nullptr;
  cudaError_t one_piece = tolerate(r, "cudaMalloc (free memory less 512 MiB, after the reset)",
                                   cudaMalloc(&whole, free - kMargin));
  // ANCHOR_END: fragmented_reset
  size_t library_bytes = library_blocks.size() * kPiece;
  size_t held_after = held(baseline, free);
  measure(r, names::HELD_AFTER_RESET, (double)held_after);
  fact(r, names::THE_LIBRARY_S_BLOCKS_ARE_STILL_HELD_AFTER_THE_RESET,
       !library_blocks.empty() && held_after + kTolerance >= library_bytes);
  fact(r, names::ONE_BLOCK_OF_NEARLY_ALL_FREE_MEMORY_IS_SERVED_AFTER_THE_RESET, one_piece == cudaSuccess);
  if (one_piece == cudaSuccess) rec(r, "cudaFree", cudaFree(whole));
  if (!lib.ctx) return 0;  // the primary context's blocks went with the reset
  CUresult rest = CUDA_SUCCESS;
  d.ctxPush(lib.ctx);
  for (CUdeviceptr b : library_blocks) {
    keep_first_error(rest, d.memFree(b));
  }
  rec_cu(r, d.errorName, "cuMemFree (the library's blocks)", rest);
  rec_cu(r, d.errorName, "cuCtxPopCurrent", d.ctxPop(&popped));
  rec_cu(r, d.errorName, "cuCtxDestroy", d.ctxDestroy(lib.ctx));
  return 0;
}

}  // namespace
