// context-leak, C++: each call creates a context with the driver API's
// cuCtxCreate, as the article's code does through its own wrapper, and the
// broken variant never destroys it. The driver calls go through the
// runtime's cudaGetDriverEntryPointByVersion, so the program links only
// the runtime, as the other C++ variants do. Both read the memory NVML
// counts for their own process (the recorder's own_memory), as the Rust
// and cust variants do, so they share the GPU; the broken one makes a few
// calls, enough to show the leak: `broken` (cudarc) runs to the driver's
// limit, once per run.

#include "casebook.h"
#include "casebook_driver.h"
#include "names.h"

using namespace casebook;

namespace {

const int kLeakCalls = 5;  // LEAK_CALLS in src/lib.rs
const int kDestroyCalls = 20;
const unsigned long long kTolerance = 64ull << 20;  // TOLERANCE in src/lib.rs

struct Driver {
  PFN_cuCtxCreate_v12050 cuCtxCreate = nullptr;
  PFN_cuCtxDestroy_v4000 cuCtxDestroy = nullptr;
  PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent = nullptr;
  PFN_cuMemAlloc_v3020 cuMemAlloc = nullptr;
  PFN_cuMemFree_v3020 cuMemFree = nullptr;
  PFN_cuGetErrorName_v6000 cuGetErrorName = nullptr;
};

cudaError_t driver(const casebook_recorder *r, Driver *d) {
  cudaError_t err = cudaSuccess;
  if (!err) err = driver_entry(r, "cuCtxCreate", 12050, &d->cuCtxCreate);
  if (!err) err = driver_entry(r, "cuCtxDestroy", 4000, &d->cuCtxDestroy);
  if (!err) err = driver_entry(r, "cuCtxSetCurrent", 4000, &d->cuCtxSetCurrent);
  if (!err) err = driver_entry(r, "cuMemAlloc", 3020, &d->cuMemAlloc);
  if (!err) err = driver_entry(r, "cuMemFree", 3020, &d->cuMemFree);
  if (!err) err = driver_entry(r, "cuGetErrorName", 6000, &d->cuGetErrorName);
  return err;
}

CUresult rec_cu(const casebook_recorder *r, const Driver &d, const char *call, CUresult res) {
  return casebook::rec_cu(r, d.cuGetErrorName, call, res);
}

// One call's work in whatever context is current: allocate and free 1 MiB.
CUresult work(const casebook_recorder *r, const Driver &d) {
  CUdeviceptr p = 0;
  CUresult res = rec_cu(r, d, "cuMemAlloc", d.cuMemAlloc(&p, 1 << 20));
  if (res == CUDA_SUCCESS) res = rec_cu(r, d, "cuMemFree", d.cuMemFree(p));
  return res;
}

}  // namespace

// ANCHOR: broken
extern "C" int casebook_context_leak_broken_cpp(const casebook_recorder *r) {
  Driver d;
  if (cudaError_t err = driver(r, &d)) return err;
  rec(r, "cudaFree(0)", cudaFree(0));  // the runtime starts, and with it the driver
  unsigned long long baseline = 0, held[kLeakCalls] = {};
  // No figure (NVML lists no memory for this process): the variant stops.
  if (!own_memory(r, &baseline)) return 1;
  int calls = under_sanitizer(r) ? 4 : kLeakCalls;
  int completed = 0;
  for (int n = 0; n < calls; ++n) {
    Iteration it(r, "call");
    CUcontext ctx = nullptr;
    if (rec_cu(r, d, "cuCtxCreate", d.cuCtxCreate(&ctx, nullptr, 0, 0)) != CUDA_SUCCESS) break;
    if (work(r, d) != CUDA_SUCCESS) break;
    // BUG: the context is never destroyed (no cuCtxDestroy).
    if (!own_memory(r, &held[n])) return 1;
    ++completed;
  }
  // ANCHOR_END: broken
  measure(r, names::CALLS_COMPLETED, completed);
  if (completed == 0) return 0;
  size_t free = 0, total = 0;
  rec(r, "cudaMemGetInfo (the device's size)", cudaMemGetInfo(&free, &total));
  // What Leak::of in src/lib.rs reads from the same figures.
  bool grows = true;
  unsigned long long before = baseline;
  for (int n = 0; n < completed; ++n) {
    point(r, names::HELD_BYTES, n + 1, (double)held[n]);
    grows = grows && held[n] > before + kTolerance;
    before = held[n];
  }
  unsigned long long last = held[completed - 1];
  double per_call = (double)(last > baseline ? last - baseline : 0) / completed;
  measure(r, names::BYTES_PER_CONTEXT, per_call);
  measure(r, names::CONTEXT_SHARE_OF_DEVICE, per_call / (double)total);
  fact(r, names::GROWS_WITH_EVERY_CALL, grows);
  check(r, names::OWN_MEMORY_RETURNS_TO_ITS_BASELINE, last <= baseline + kTolerance);
  return 0;
}

// ANCHOR: fixed
extern "C" int casebook_context_leak_fixed_cpp(const casebook_recorder *r) {
  Driver d;
  if (cudaError_t err = driver(r, &d)) return err;
  CUcontext first = nullptr;
  if (rec_cu(r, d, "cuCtxCreate", d.cuCtxCreate(&first, nullptr, 0, 0)) != CUDA_SUCCESS) return 0;
  unsigned long long baseline = 0, after = 0;
  // No figure (NVML lists no memory for this process): the variant stops.
  if (!own_memory(r, &baseline)) return 1;
  int calls = under_sanitizer(r) ? 4 : kDestroyCalls;
  for (int n = 0; n < calls; ++n) {
    Iteration it(r, "call");
    CUcontext ctx = nullptr;
    if (rec_cu(r, d, "cuCtxCreate", d.cuCtxCreate(&ctx, nullptr, 0, 0)) != CUDA_SUCCESS) return 0;
    work(r, d);
    rec_cu(r, d, "cuCtxDestroy", d.cuCtxDestroy(ctx));  // FIX
  }
  // ANCHOR_END: fixed
  rec_cu(r, d, "cuCtxSetCurrent", d.cuCtxSetCurrent(first));
  if (!own_memory(r, &after)) return 1;
  check(r, names::OWN_MEMORY_RETURNS_TO_ITS_BASELINE, after <= baseline + kTolerance);
  rec_cu(r, d, "cuCtxDestroy", d.cuCtxDestroy(first));
  return 0;
}
