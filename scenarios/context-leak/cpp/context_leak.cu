// context-leak, C++: each call creates a context with the driver API's
// cuCtxCreate, as the article's code does through its own wrapper, and the
// broken variant never destroys it. The driver calls go through the
// runtime's cudaGetDriverEntryPointByVersion, so the program links only
// the runtime, as the other C++ variants do.

#include "casebook.h"
#include "casebook_driver.h"
#include "names.h"

using namespace casebook;

namespace {

const int kMaxCalls = 2000;
const int kDestroyCalls = 20;

struct Driver {
  PFN_cuCtxCreate_v12050 cuCtxCreate = nullptr;
  PFN_cuCtxDestroy_v4000 cuCtxDestroy = nullptr;
  PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent = nullptr;
  PFN_cuMemAlloc_v3020 cuMemAlloc = nullptr;
  PFN_cuMemFree_v3020 cuMemFree = nullptr;
  PFN_cuMemGetInfo_v3020 cuMemGetInfo = nullptr;
  PFN_cuGetErrorName_v6000 cuGetErrorName = nullptr;
};

cudaError_t driver(const casebook_recorder *r, Driver *d) {
  cudaError_t err = cudaSuccess;
  if (!err) err = driver_entry(r, "cuCtxCreate", 12050, &d->cuCtxCreate);
  if (!err) err = driver_entry(r, "cuCtxDestroy", 4000, &d->cuCtxDestroy);
  if (!err) err = driver_entry(r, "cuCtxSetCurrent", 4000, &d->cuCtxSetCurrent);
  if (!err) err = driver_entry(r, "cuMemAlloc", 3020, &d->cuMemAlloc);
  if (!err) err = driver_entry(r, "cuMemFree", 3020, &d->cuMemFree);
  if (!err) err = driver_entry(r, "cuMemGetInfo", 3020, &d->cuMemGetInfo);
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
  int calls = under_sanitizer(r) ? 4 : kMaxCalls;
  int completed = 0;
  size_t free_before_failure = 0, total = 0;
  CUresult failed = CUDA_SUCCESS;
  for (int n = 0; n < calls && failed == CUDA_SUCCESS; ++n) {
    Iteration it(r, "call");
    CUcontext ctx = nullptr;
    failed = rec_cu(r, d, "cuCtxCreate", d.cuCtxCreate(&ctx, nullptr, 0, 0));
    if (failed != CUDA_SUCCESS) break;
    failed = work(r, d);
    if (failed == CUDA_SUCCESS) failed = rec_cu(r, d, "cuMemGetInfo", d.cuMemGetInfo(&free_before_failure, &total));
    if (failed == CUDA_SUCCESS) ++completed;
    // BUG: the context is never destroyed (no cuCtxDestroy).
  }
  // ANCHOR_END: broken
  measure(r, names::CALLS_COMPLETED, completed);
  if (failed != CUDA_SUCCESS && completed > 0) {
    measure(r, names::FREE_WHEN_IT_FAILED, (double)free_before_failure);
    fact_text(r, names::STILL_FREE, free_before_failure * 20 > total ? "more than 5% of the device" : "almost none");
  }
  return 0;  // it stops at the failure, which its steps record
}

// ANCHOR: fixed
extern "C" int casebook_context_leak_fixed_cpp(const casebook_recorder *r) {
  Driver d;
  if (cudaError_t err = driver(r, &d)) return err;
  CUcontext first = nullptr;
  if (rec_cu(r, d, "cuCtxCreate", d.cuCtxCreate(&first, nullptr, 0, 0)) != CUDA_SUCCESS) return 0;
  size_t baseline = 0, after = 0, total = 0;
  rec_cu(r, d, "cuMemGetInfo", d.cuMemGetInfo(&baseline, &total));
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
  rec_cu(r, d, "cuMemGetInfo", d.cuMemGetInfo(&after, &total));
  check(r, names::FREE_MEMORY_RETURNS_TO_ITS_BASELINE, after + (64u << 20) >= baseline);
  rec_cu(r, d, "cuCtxDestroy", d.cuCtxDestroy(first));
  return 0;
}
