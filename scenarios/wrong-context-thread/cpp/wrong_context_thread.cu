// wrong-context-thread, C++. The driver calls go through the runtime's
// cudaGetDriverEntryPointByVersion, so the program links only the runtime,
// as the other C++ variants do.

#include "casebook.h"
#include "casebook_driver.h"
#include "names.h"

#include <thread>

using namespace casebook;

namespace {

struct Driver {
  PFN_cuCtxCreate_v12050 cuCtxCreate = nullptr;
  PFN_cuCtxDestroy_v4000 cuCtxDestroy = nullptr;
  PFN_cuCtxGetCurrent_v4000 cuCtxGetCurrent = nullptr;
  PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent = nullptr;
  PFN_cuMemAlloc_v3020 cuMemAlloc = nullptr;
  PFN_cuMemFree_v3020 cuMemFree = nullptr;
  PFN_cuGetErrorName_v6000 cuGetErrorName = nullptr;
  PFN_cuDevicePrimaryCtxGetState_v7000 cuDevicePrimaryCtxGetState = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 cuDevicePrimaryCtxRelease = nullptr;
};

cudaError_t driver(const casebook_recorder *r, Driver *d) {
  cudaError_t err = cudaSuccess;
  if (!err) err = driver_entry(r, "cuCtxCreate", 12050, &d->cuCtxCreate);
  if (!err) err = driver_entry(r, "cuCtxDestroy", 4000, &d->cuCtxDestroy);
  if (!err) err = driver_entry(r, "cuCtxGetCurrent", 4000, &d->cuCtxGetCurrent);
  if (!err) err = driver_entry(r, "cuCtxSetCurrent", 4000, &d->cuCtxSetCurrent);
  if (!err) err = driver_entry(r, "cuMemAlloc", 3020, &d->cuMemAlloc);
  if (!err) err = driver_entry(r, "cuMemFree", 3020, &d->cuMemFree);
  if (!err) err = driver_entry(r, "cuGetErrorName", 6000, &d->cuGetErrorName);
  if (!err) err = driver_entry(r, "cuDevicePrimaryCtxGetState", 7000, &d->cuDevicePrimaryCtxGetState);
  if (!err) err = driver_entry(r, "cuDevicePrimaryCtxRetain", 7000, &d->cuDevicePrimaryCtxRetain);
  if (!err) err = driver_entry(r, "cuDevicePrimaryCtxRelease", 11000, &d->cuDevicePrimaryCtxRelease);
  return err;
}

CUresult rec_cu(const casebook_recorder *r, const Driver &d, const char *call, CUresult res) {
  return casebook::rec_cu(r, d.cuGetErrorName, call, res);
}

// What the worker thread saw and did, recorded after it is joined.
struct ThreadCalls {
  CUresult current = CUDA_SUCCESS, bind = CUDA_SUCCESS, alloc = CUDA_SUCCESS, free = CUDA_SUCCESS;
  bool had_context = false, bound = false;
};

// The worker's work: allocate and free 1 MiB through the driver API.
void thread_work(const Driver &d, ThreadCalls *t) {
  CUdeviceptr p = 0;
  t->alloc = d.cuMemAlloc(&p, 1 << 20);
  if (t->alloc == CUDA_SUCCESS) t->free = d.cuMemFree(p);
}

void record_thread(const casebook_recorder *r, const Driver &d, const ThreadCalls &t) {
  rec_cu(r, d, "thread: cuCtxGetCurrent", t.current);
  fact_text(r, names::CURRENT_ON_THE_THREAD, t.had_context ? "a context" : "none");
  if (t.bound) rec_cu(r, d, "thread: cuCtxSetCurrent", t.bind);
  rec_cu(r, d, "thread: cuMemAlloc", t.alloc);
  if (t.alloc == CUDA_SUCCESS) rec_cu(r, d, "thread: cuMemFree", t.free);
  check(r, names::THREAD_ALLOCATES, t.alloc == CUDA_SUCCESS);
}

template <bool kBind>
int drive(const casebook_recorder *r) {
  Driver d;
  if (cudaError_t err = driver(r, &d)) return err;
  rec(r, "cudaSetDevice", cudaSetDevice(0));
  rec(r, "cudaFree(0)", cudaFree(0));  // the primary context, current on this thread
  CUcontext ctx = nullptr;
  rec_cu(r, d, "cuCtxGetCurrent", d.cuCtxGetCurrent(&ctx));
  ThreadCalls t;
  std::thread worker([&] {
    CUcontext mine = nullptr;
    t.current = d.cuCtxGetCurrent(&mine);
    t.had_context = mine != nullptr;
    if (kBind) {
      t.bound = true;
      t.bind = d.cuCtxSetCurrent(ctx);  // FIX: make the context current on this thread
    }
    thread_work(d, &t);
  });
  worker.join();
  record_thread(r, d, t);
  return 0;
}

}  // namespace

// ANCHOR: broken
extern "C" int casebook_wrong_context_thread_broken_cpp(const casebook_recorder *r) {
  // The main thread's context is current there only; the worker thread
  // makes driver calls with none current (BUG).
  return drive<false>(r);
}
// ANCHOR_END: broken

// ANCHOR: fixed
extern "C" int casebook_wrong_context_thread_fixed_cpp(const casebook_recorder *r) {
  // The worker thread makes the main thread's context current first.
  return drive<true>(r);
}
// ANCHOR_END: fixed

namespace {

// ANCHOR: runtime_on_thread
// The process works in a context of its own, made with the driver API; a
// new thread makes a runtime call. `own_current`: the thread makes that
// context current first (cuCtxSetCurrent), as the passage's first clause
// says; without it, no context is current there.
int runtime_on_thread(const casebook_recorder *r, bool own_current) {
  Driver d;
  if (cudaError_t err = driver(r, &d)) return err;
  CUcontext own = nullptr;
  if (rec_cu(r, d, "cuCtxCreate", d.cuCtxCreate(&own, nullptr, 0, 0)) != CUDA_SUCCESS) return 0;
  size_t before = 0, after = 0, total = 0;
  rec(r, "cudaMemGetInfo", cudaMemGetInfo(&before, &total));
  CUresult bound = CUDA_SUCCESS;
  cudaError_t thread_result = cudaSuccess;
  void *p = nullptr;
  CUcontext used = nullptr;
  CUresult asked = CUDA_SUCCESS;
  CUcontext current = nullptr;  // what is current on the thread before its runtime call
  CUresult looked = CUDA_SUCCESS;
  std::thread worker([&] {
    if (own_current) bound = d.cuCtxSetCurrent(own);
    looked = d.cuCtxGetCurrent(&current);
    thread_result = cudaMalloc(&p, 1 << 20);
    if (thread_result == cudaSuccess) thread_result = cudaFree(p);
    asked = d.cuCtxGetCurrent(&used);  // the context the runtime worked in
  });
  worker.join();
  if (own_current) rec_cu(r, d, "thread: cuCtxSetCurrent (the process's own context)", bound);
  rec_cu(r, d, "thread: cuCtxGetCurrent (before the runtime call)", looked);
  fact(r, names::A_CONTEXT_IS_CURRENT_ON_THE_THREAD_BEFORE_ITS_CALL, looked == CUDA_SUCCESS && current != nullptr);
  rec(r, "thread: cudaMalloc, cudaFree", thread_result);
  rec_cu(r, d, "thread: cuCtxGetCurrent", asked);
  // Which context that was: the device's primary context is active only if
  // something started it; its handle is retained (and released) only then,
  // so that reading it starts nothing.
  unsigned int flags = 0;
  int active = 0;
  rec_cu(r, d, "cuDevicePrimaryCtxGetState", d.cuDevicePrimaryCtxGetState(0, &flags, &active));
  fact(r, names::THE_PRIMARY_CONTEXT_IS_ACTIVE, active != 0);
  CUcontext primary = nullptr;
  if (active && rec_cu(r, d, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain(&primary, 0)) == CUDA_SUCCESS) {
    rec_cu(r, d, "cuDevicePrimaryCtxRelease", d.cuDevicePrimaryCtxRelease(0));
  }
  fact(r, names::THE_THREAD_WORKED_IN_THE_PRIMARY_CONTEXT, used != nullptr && used == primary);
  fact(r, names::THE_THREAD_WORKED_IN_THE_PROCESS_OWN_CONTEXT, used != nullptr && used == own);
  check(r, names::THREAD_ALLOCATES, thread_result == cudaSuccess);
  rec(r, "cudaMemGetInfo", cudaMemGetInfo(&after, &total));
  double taken = before > after ? (double)(before - after) : 0.0;
  measure(r, names::SILENT_CONTEXT_BYTES, taken);
  fact_text(r, names::SILENT_COST, taken >= 64.0 * (1 << 20) ? "64 MiB or more" : taken > 0 ? "under 64 MiB" : "none");
  rec_cu(r, d, "cuCtxDestroy", d.cuCtxDestroy(own));
  return 0;
}
// ANCHOR_END: runtime_on_thread

}  // namespace

// ANCHOR: silent_primary
extern "C" int casebook_wrong_context_thread_silent_primary_cpp(const casebook_recorder *r) {
  // No context is current on the thread: the runtime takes the primary one.
  return runtime_on_thread(r, false);
}
// ANCHOR_END: silent_primary

// ANCHOR: own_current
extern "C" int casebook_wrong_context_thread_own_current_cpp(const casebook_recorder *r) {
  // The control: the thread makes the process's own context current first.
  return runtime_on_thread(r, true);
}
// ANCHOR_END: own_current
