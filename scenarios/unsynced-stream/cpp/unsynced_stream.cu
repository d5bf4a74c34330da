// unsynced-stream, C++ variants: seed 000, example 3, made complete.
//
// The article's example is the fixed one: kernel launches on a stream, then
// cudaStreamSynchronize, then "subsequent code relying on the results". The
// broken variant is the same program with the synchronise moved after the
// host's read; the kernel and copy are filled in where the article has
// "// ... kernel launches on stream ...".

#include "casebook.h"
#include "names.h"
#include "spin.cuh"

using namespace casebook;

static const int kRuns = 10;
static const int kN = 1 << 20;
static const unsigned long long kSpinNs = 50000000ULL;
static const float kSentinel = -1.0f;

static __global__ void fillAfterWait(float *out, int n, float value, unsigned long long spin_ns) {
  casebook_spin_ns(spin_ns);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = value;
}

static bool holds(volatile const float *host, float value) {
  for (int i = 0; i < kN; ++i)
    if (host[i] != value) return false;
  return true;
}

static void enqueue(const casebook_recorder *r, cudaStream_t stream, float *d_out, float *h_out, float value) {
  fillAfterWait<<<8, 256, 0, stream>>>(d_out, kN, value, kSpinNs);
  rec(r, "fillAfterWait<<<..., stream>>>", cudaGetLastError());
  rec(r, "cudaMemcpyAsync DtoH", cudaMemcpyAsync(h_out, d_out, kN * sizeof(float), cudaMemcpyDeviceToHost, stream));
}

// ANCHOR: broken
static bool one_run_broken(const casebook_recorder *r, cudaStream_t stream, float *d_out, float *h_out, float value) {
  enqueue(r, stream, d_out, h_out, value);
  bool fresh = holds(h_out, value);  // ... subsequent code relying on the results ...
  rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(stream));
  return fresh;
}
// ANCHOR_END: broken

// ANCHOR: fixed
static bool one_run_fixed(const casebook_recorder *r, cudaStream_t stream, float *d_out, float *h_out, float value) {
  enqueue(r, stream, d_out, h_out, value);
  rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(stream));  // Ensure all operations on the stream have completed
  bool fresh = holds(h_out, value);  // ... subsequent code relying on the results ...
  return fresh;
}
// ANCHOR_END: fixed

typedef bool (*OneRun)(const casebook_recorder *, cudaStream_t, float *, float *, float);

static int drive(const casebook_recorder *r, OneRun one_run) {
  cudaStream_t stream;
  float *d_out, *h_out;
  if (rec(r, "cudaStreamCreate", cudaStreamCreate(&stream)) != cudaSuccess) return 1;
  if (rec(r, "cudaMalloc", cudaMalloc((void **)&d_out, kN * sizeof(float))) != cudaSuccess) return 1;
  if (rec(r, "cudaMallocHost", cudaMallocHost((void **)&h_out, kN * sizeof(float))) != cudaSuccess) return 1;
  int stale = 0;
  for (int run = 0; run < kRuns; ++run) {
    for (int i = 0; i < kN; ++i) h_out[i] = kSentinel;
    Iteration it(r, "run");
    if (!one_run(r, stream, d_out, h_out, (float)(run + 1))) ++stale;
  }
  rec(r, "cudaStreamDestroy", cudaStreamDestroy(stream));  // Release the stream
  rec(r, "cudaFreeHost", cudaFreeHost(h_out));
  rec(r, "cudaFree", cudaFree(d_out));
  measure(r, names::RUNS_MADE, kRuns);
  measure(r, names::STALE_READS, stale);
  measure(r, names::REPRODUCTION_RATE, (double)stale / kRuns);
  fact_text(r, names::RATE, stale == 0 ? "none" : stale == kRuns ? "every run" : "some runs (flaky: the scenario is not deterministic)");
  check(r, names::FRESH, stale == 0);
  return 0;
}

extern "C" int casebook_unsynced_stream_broken_cpp(const casebook_recorder *r) {
  return drive(r, one_run_broken);
}

extern "C" int casebook_unsynced_stream_fixed_cpp(const casebook_recorder *r) {
  return drive(r, one_run_fixed);
}

// device-sync: seed 000's "cudaDeviceSynchronize(), which ensures the GPU
// completes all pending operations before the CPU proceeds". Two streams,
// each with its kernel and copy; one cudaDeviceSynchronize; then the host
// reads both results.
extern "C" int casebook_unsynced_stream_device_sync_cpp(const casebook_recorder *r) {
  cudaStream_t streams[2];
  float *d_out[2], *h_out[2];
  for (int s = 0; s < 2; ++s) {
    if (rec(r, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking)) != cudaSuccess) return 1;
    if (rec(r, "cudaMalloc", cudaMalloc((void **)&d_out[s], kN * sizeof(float))) != cudaSuccess) return 1;
    if (rec(r, "cudaMallocHost", cudaMallocHost((void **)&h_out[s], kN * sizeof(float))) != cudaSuccess) return 1;
  }
  int stale = 0;
  for (int run = 0; run < kRuns; ++run) {
    Iteration it(r, "run");
    for (int s = 0; s < 2; ++s) {
      for (int i = 0; i < kN; ++i) h_out[s][i] = kSentinel;
      enqueue(r, streams[s], d_out[s], h_out[s], (float)(run + 1 + s));
    }
    // ANCHOR: device_sync
    rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());  // waits for both streams
    // ANCHOR_END: device_sync
    for (int s = 0; s < 2; ++s)
      if (!holds(h_out[s], (float)(run + 1 + s))) ++stale;
  }
  for (int s = 0; s < 2; ++s) {
    rec(r, "cudaStreamDestroy", cudaStreamDestroy(streams[s]));
    rec(r, "cudaFreeHost", cudaFreeHost(h_out[s]));
    rec(r, "cudaFree", cudaFree(d_out[s]));
  }
  measure(r, names::READS, 2 * kRuns);
  measure(r, names::STALE_READS, stale);
  fact_text(r, names::RATE, stale == 0 ? "none" : stale == 2 * kRuns ? "every run" : "some runs (flaky: the scenario is not deterministic)");
  check(r, names::FRESH, stale == 0);
  return 0;
}
