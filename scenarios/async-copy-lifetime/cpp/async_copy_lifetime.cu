// async-copy-lifetime, C++: cudaMemcpyAsync from pinned memory, queued
// behind a kernel that waits 200 ms, and the buffer reused at once.

#include "casebook.h"
#include "names.h"
#include "spin.cuh"

#include <chrono>
#include <vector>

using namespace casebook;

static const size_t kWords = 4u << 20;
static const unsigned kSent = 0x5e5e5e5eu;
static const unsigned kOverwritten = 0x0b0b0b0bu;
static const unsigned long long kSpinNs = 200000000ull;

static __global__ void holdStream(unsigned long long spin_ns) { casebook_spin_ns(spin_ns); }

static void fill(unsigned *host, unsigned value) {
  for (size_t i = 0; i < kWords; ++i) host[i] = value;
}

// The copy, timed, and whether the stream still had it queued on return.
static void copy(const casebook_recorder *r, unsigned *dst, const unsigned *src, cudaStream_t s) {
  auto start = std::chrono::steady_clock::now();
  rec(r, "cudaMemcpyAsync", cudaMemcpyAsync(dst, src, kWords * sizeof(unsigned), cudaMemcpyHostToDevice, s));
  measure(r, names::COPY_CALL_SECONDS,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  cudaError_t query = tolerate(r, "cudaStreamQuery", cudaStreamQuery(s));
  fact(r, names::STILL_QUEUED, query == cudaErrorNotReady);
}

// Waits for the stream, reads the device buffer back, says what it holds.
static void finish(const casebook_recorder *r, unsigned *dst, cudaStream_t s) {
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
  finish(r, dst, s);
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
  finish(r, dst, s);
  rec(r, "cudaFreeHost", cudaFreeHost(host));
  return 0;
}
