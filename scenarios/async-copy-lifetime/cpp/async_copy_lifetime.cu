// async-copy-lifetime, C++: cudaMemcpyAsync from pinned memory, queued
// behind a kernel that waits 200 ms, and the buffer reused at once. Whether
// the copy is still queued when its call returns is read from five more
// copies after the program, timed in pairs and decided by the recorder's
// compare_pairs (the Rust rule, queued_when_the_call_returned in src/lib.rs).

#include "casebook.h"
#include "names.h"
#include "spin.cuh"

#include <algorithm>
#include <chrono>
#include <vector>

using namespace casebook;

static const size_t kWords = 4u << 20;
static const unsigned kSent = 0x5e5e5e5eu;
static const unsigned kOverwritten = 0x0b0b0b0bu;
static const unsigned long long kSpinNs = 200000000ull;
static const int kTimedCopies = 5;                    // TIMED_COPIES
static const double kQueuedRatio = 2.0;               // QUEUED_RATIO
static const double kQueuedLeast = kSpinNs * 1e-9 / 4;  // QUEUED_LEAST_SECONDS

static __global__ void holdStream(unsigned long long spin_ns) { casebook_spin_ns(spin_ns); }

static void fill(unsigned *host, unsigned value) {
  for (size_t i = 0; i < kWords; ++i) host[i] = value;
}

static double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The copy call.
static void copy(const casebook_recorder *r, unsigned *dst, const unsigned *src, cudaStream_t s) {
  rec(r, "cudaMemcpyAsync", cudaMemcpyAsync(dst, src, kWords * sizeof(unsigned), cudaMemcpyHostToDevice, s));
}

// The program's copy kTimedCopies times more, each behind the kernel that
// waits, timed as a pair: until the stream has done it, until its call
// returned. The fastest call, and whether the copy was still queued when its
// call returned.
static void time_copies(const casebook_recorder *r, unsigned *dst, const unsigned *src, cudaStream_t s) {
  double done[kTimedCopies], returned[kTimedCopies], fastest = 1e30;
  for (int i = 0; i < kTimedCopies; ++i) {
    Iteration it(r, "the copy again, timed");
    holdStream<<<1, 1, 0, s>>>(kSpinNs);
    rec(r, "holdStream<<<>>> (waits 200 ms)", cudaGetLastError());
    auto start = std::chrono::steady_clock::now();
    copy(r, dst, src, s);
    returned[i] = since(start);
    rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(s));
    done[i] = since(start);
    fastest = std::min(fastest, returned[i]);
  }
  measure(r, names::COPY_CALL_SECONDS, fastest);
  fact(r, names::STILL_QUEUED,
       compare_pairs(r, done, returned, kTimedCopies, kQueuedLeast, kQueuedRatio) == Larger::A);
}

// Waits for the stream, reads the device buffer back, says what it holds;
// times the copy from `src` again; frees.
static void finish(const casebook_recorder *r, unsigned *dst, const unsigned *src, cudaStream_t s) {
  rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(s));
  std::vector<unsigned> back(kWords, 0);
  rec(r, "cudaMemcpy", cudaMemcpy(back.data(), dst, kWords * sizeof(unsigned), cudaMemcpyDeviceToHost));
  bool sent = true, after = true;
  for (unsigned w : back) {
    sent = sent && w == kSent;
    after = after && w == kOverwritten;
  }
  fact_text(r, names::DEVICE_HOLDS, sent ? "what was sent" : after ? "what was written after the call" : "a mix");
  check(r, names::DEVICE_HOLDS_SENT, sent);
  time_copies(r, dst, src, s);
  rec(r, "cudaFree", cudaFree(dst));
  rec(r, "cudaStreamDestroy", cudaStreamDestroy(s));
}

// ANCHOR: broken
extern "C" int casebook_async_copy_lifetime_broken_cpp(const casebook_recorder *r) {
  cudaStream_t s;
  rec(r, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned *dst = nullptr, *host = nullptr;
  rec(r, "cudaMalloc", cudaMalloc((void **)&dst, kWords * sizeof(unsigned)));
  if (rec(r, "cudaMallocHost", cudaMallocHost((void **)&host, kWords * sizeof(unsigned))) != cudaSuccess) return 1;
  fill(host, kSent);
  holdStream<<<1, 1, 0, s>>>(kSpinNs);
  rec(r, "holdStream<<<>>> (waits 200 ms)", cudaGetLastError());
  copy(r, dst, host, s);
  // BUG: the buffer is reused while the copy from it is still queued.
  fill(host, kOverwritten);
  // ANCHOR_END: broken
  finish(r, dst, host, s);
  rec(r, "cudaFreeHost", cudaFreeHost(host));
  return 0;
}

// ANCHOR: fixed
extern "C" int casebook_async_copy_lifetime_fixed_cpp(const casebook_recorder *r) {
  cudaStream_t s;
  rec(r, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  unsigned *dst = nullptr, *host = nullptr;
  rec(r, "cudaMalloc", cudaMalloc((void **)&dst, kWords * sizeof(unsigned)));
  if (rec(r, "cudaMallocHost", cudaMallocHost((void **)&host, kWords * sizeof(unsigned))) != cudaSuccess) return 1;
  fill(host, kSent);
  holdStream<<<1, 1, 0, s>>>(kSpinNs);
  rec(r, "holdStream<<<>>> (waits 200 ms)", cudaGetLastError());
  copy(r, dst, host, s);
  // FIX: the buffer is reused only once the copy from it is done.
  cudaEvent_t copied;
  rec(r, "cudaEventCreateWithFlags", cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
  rec(r, "cudaEventRecord", cudaEventRecord(copied, s));
  rec(r, "cudaEventSynchronize", cudaEventSynchronize(copied));
  fill(host, kOverwritten);
  // ANCHOR_END: fixed
  rec(r, "cudaEventDestroy", cudaEventDestroy(copied));
  finish(r, dst, host, s);
  rec(r, "cudaFreeHost", cudaFreeHost(host));
  return 0;
}
