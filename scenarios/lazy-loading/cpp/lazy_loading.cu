// lazy-loading, C++: a kernel waits for a flag that another kernel sets.
// The releasing kernel is in cpp/lazy_release.cu, as a kernel of another
// part of the program would be; under lazy loading its code is loaded at
// its first launch.

#include "casebook.h"
#include "lazy_loading.cuh"
#include "names.h"

#include <chrono>

using namespace casebook;

extern "C" cudaError_t casebook_lazy_release_launch(unsigned int *flag, cudaStream_t s);
extern "C" cudaError_t casebook_lazy_release_preload();

static const unsigned long long kLimitNs = 5000000000ull;  // the waiter gives up after 5 s

__global__ void wait_for_release(volatile unsigned int *flag, unsigned int *result, unsigned long long limit_ns) {
  casebook_wait_for_release(flag, result, limit_ns);
}

// The waiter on one stream, then the first launch of the releasing kernel
// on another; records how long that launch took and what the waiter saw.
static int run_pair(const casebook_recorder *r) {
  cudaStream_t waits, releases;
  rec(r, "cudaStreamCreateWithFlags (waiter)", cudaStreamCreateWithFlags(&waits, cudaStreamNonBlocking));
  rec(r, "cudaStreamCreateWithFlags (release)", cudaStreamCreateWithFlags(&releases, cudaStreamNonBlocking));
  unsigned int *flag = nullptr, *result = nullptr;
  rec(r, "cudaMalloc (flag)", cudaMalloc((void **)&flag, sizeof(unsigned int)));
  rec(r, "cudaMalloc (result)", cudaMalloc((void **)&result, sizeof(unsigned int)));
  rec(r, "cudaMemset (flag)", cudaMemset(flag, 0, sizeof(unsigned int)));
  rec(r, "cudaMemset (result)", cudaMemset(result, 0, sizeof(unsigned int)));
  // cudaMemset runs on the legacy default stream, which does not order the
  // non-blocking streams below, and may return before it is done.
  rec(r, "cudaDeviceSynchronize (the words are zero)", cudaDeviceSynchronize());
  wait_for_release<<<1, 1, 0, waits>>>(flag, result, kLimitNs);
  rec(r, "wait_for_release<<<>>>", cudaGetLastError());
  auto start = std::chrono::steady_clock::now();
  rec(r, "release<<<>>> (its first launch)", casebook_lazy_release_launch(flag, releases));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  measure(r, names::RELEASE_LAUNCH_SECONDS, took);
  fact_text(r, names::LAUNCH_RETURNED, took < 1.0 ? "at once" : "after a wait");
  rec(r, "cudaStreamSynchronize (release)", cudaStreamSynchronize(releases));
  measure(r, names::RELEASE_DONE_SECONDS,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  rec(r, "cudaStreamSynchronize (waiter)", cudaStreamSynchronize(waits));
  unsigned int seen = 0;
  rec(r, "cudaMemcpy (result)", cudaMemcpy(&seen, result, sizeof seen, cudaMemcpyDeviceToHost));
  fact_text(r, names::WAITER,
            seen == CASEBOOK_RELEASED ? "released" : seen == CASEBOOK_GAVE_UP ? "gave up waiting" : "wrote nothing");
  check(r, names::RELEASED, seen == CASEBOOK_RELEASED);
  rec(r, "cudaFree (flag)", cudaFree(flag));
  rec(r, "cudaFree (result)", cudaFree(result));
  rec(r, "cudaStreamDestroy (waiter)", cudaStreamDestroy(waits));
  rec(r, "cudaStreamDestroy (release)", cudaStreamDestroy(releases));
  return 0;
}

// ANCHOR: broken
extern "C" int casebook_lazy_loading_broken_cpp(const casebook_recorder *r) {
  // BUG: the releasing kernel is launched for the first time while the
  // waiting kernel runs; loading it waits for the waiter.
  return run_pair(r);
}
// ANCHOR_END: broken

// ANCHOR: fixed
extern "C" int casebook_lazy_loading_fixed_cpp(const casebook_recorder *r) {
  // FIX: load the releasing kernel before the waiting kernel starts.
  rec(r, "cudaFuncGetAttributes release", casebook_lazy_release_preload());
  return run_pair(r);
}
// ANCHOR_END: fixed
