// async-free-race, C++ variants: seed 004, example 3, made complete.
//
// The article allocates with cudaMallocAsync on several streams and frees
// with cudaFreeAsync. The race it does not show: a kernel on another
// stream still reading the buffer when it is freed. Broken frees on stream
// 0 while stream 1 reads; fixed makes stream 0 wait on an event recorded on
// stream 1 first.

#include "casebook.h"
#include "names.h"
#include "spin.cuh"

using namespace casebook;

static const int kRuns = 5;
static const int kN = 1 << 20;
static const unsigned long long kSpinNs = 50000000ULL;
static const float kGiven = 1.0f, kNextOwner = 7.0f;

static __global__ void copyAfterWait(const float *in, float *out, int n, unsigned long long spin_ns) {
  casebook_spin_ns(spin_ns);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = in[i];
}

struct Run {
  bool reader_ok;
  bool reused;
  bool no_new_memory;  // the next allocation left the pool's reserved memory as it was
};

// The memory the default pool holds from the device now.
static unsigned long long reserved(const casebook_recorder *r, cudaMemPool_t pool) {
  unsigned long long bytes = 0;
  rec(r, "cudaMemPoolGetAttribute (ReservedMemCurrent)", cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &bytes));
  return bytes;
}

static void fill(float *host, float value) {
  for (int i = 0; i < kN; ++i) host[i] = value;
}

// kTrimmed: the control of the cache's claim. Before the next request,
// stream 0 is waited for and the pool trimmed, so that it holds no cached
// block to serve it from.
template <bool kFixed, bool kTrimmed>
static Run one_run(const casebook_recorder *r, cudaStream_t *streams, float *d_out, float *h_buf, cudaMemPool_t pool) {
  float *x, *y;
  fill(h_buf, kGiven);
  rec(r, "cudaMallocAsync (stream 0)", cudaMallocAsync((void **)&x, kN * sizeof(float), streams[0]));
  rec(r, "cudaMemcpyAsync HtoD (stream 0)", cudaMemcpyAsync(x, h_buf, kN * sizeof(float), cudaMemcpyHostToDevice, streams[0]));
  rec(r, "cudaStreamSynchronize (stream 0)", cudaStreamSynchronize(streams[0]));
  copyAfterWait<<<8, 256, 0, streams[1]>>>(x, d_out, kN, kSpinNs);
  rec(r, "copyAfterWait<<<..., stream 1>>>", cudaGetLastError());
  cudaEvent_t read_done;
  if (kFixed) {
    // ANCHOR: fixed
    rec(r, "cudaEventCreateWithFlags", cudaEventCreateWithFlags(&read_done, cudaEventDisableTiming));
    rec(r, "cudaEventRecord (stream 1)", cudaEventRecord(read_done, streams[1]));
    rec(r, "cudaStreamWaitEvent (stream 0)", cudaStreamWaitEvent(streams[0], read_done, 0));
    rec(r, "cudaFreeAsync (stream 0)", cudaFreeAsync(x, streams[0]));
    // ANCHOR_END: fixed
  } else {
    // ANCHOR: broken
    rec(r, "cudaFreeAsync (stream 0)", cudaFreeAsync(x, streams[0]));  // stream 1 may still read x
    // ANCHOR_END: broken
  }
  if (kTrimmed) {
    rec(r, "cudaStreamSynchronize (stream 0)", cudaStreamSynchronize(streams[0]));
    rec(r, "cudaMemPoolTrimTo (0)", cudaMemPoolTrimTo(pool, 0));
  }
  fill(h_buf, kNextOwner);
  unsigned long long before = reserved(r, pool);
  rec(r, "cudaMallocAsync (stream 0)", cudaMallocAsync((void **)&y, kN * sizeof(float), streams[0]));
  bool no_new_memory = reserved(r, pool) <= before;
  rec(r, "cudaMemcpyAsync HtoD (stream 0)", cudaMemcpyAsync(y, h_buf, kN * sizeof(float), cudaMemcpyHostToDevice, streams[0]));
  rec(r, "cudaStreamSynchronize (stream 1)", cudaStreamSynchronize(streams[1]));
  rec(r, "cudaMemcpy DtoH", cudaMemcpy(h_buf, d_out, kN * sizeof(float), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < kN; ++i) ok = ok && h_buf[i] == kGiven;
  rec(r, "cudaFreeAsync (stream 0)", cudaFreeAsync(y, streams[0]));
  rec(r, "cudaStreamSynchronize (stream 0)", cudaStreamSynchronize(streams[0]));
  if (kFixed) rec(r, "cudaEventDestroy", cudaEventDestroy(read_done));
  return Run{ok, x == y, no_new_memory};
}

template <bool kFixed, bool kTrimmed>
static int drive(const casebook_recorder *r) {
  const int num_streams = 2;
  cudaStream_t streams[num_streams];
  for (int i = 0; i < num_streams; ++i)
    rec(r, "cudaStreamCreateWithFlags (non-blocking)", cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
  float *d_out, *h_buf;
  if (rec(r, "cudaMalloc", cudaMalloc((void **)&d_out, kN * sizeof(float))) != cudaSuccess) return 1;
  if (rec(r, "cudaMallocHost", cudaMallocHost((void **)&h_buf, kN * sizeof(float))) != cudaSuccess) return 1;
  int device = 0;
  rec(r, "cudaGetDevice", cudaGetDevice(&device));
  cudaMemPool_t pool;
  rec(r, "cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, device));
  int corrupted = 0, reused = 0, no_new_memory = 0;
  for (int run = 0; run < kRuns; ++run) {
    Iteration it(r, "run");
    Run result = one_run<kFixed, kTrimmed>(r, streams, d_out, h_buf, pool);
    corrupted += !result.reader_ok;
    reused += result.reused;
    no_new_memory += result.no_new_memory;
  }
  for (int i = 0; i < num_streams; ++i) rec(r, "cudaStreamDestroy", cudaStreamDestroy(streams[i]));
  rec(r, "cudaFreeHost", cudaFreeHost(h_buf));
  rec(r, "cudaFree", cudaFree(d_out));
  measure(r, names::RUNS_MADE, kRuns);
  measure(r, names::CORRUPTED_READS, corrupted);
  measure(r, names::REPRODUCTION_RATE, (double)corrupted / kRuns);
  fact_text(r, names::RATE, runs_in_words(corrupted, kRuns));
  fact(r, names::REUSED, reused == kRuns);
  fact(r, names::SERVED_FROM_THE_POOL, no_new_memory == kRuns);
  check(r, names::READER_OK, corrupted == 0);
  return 0;
}

extern "C" int casebook_async_free_race_broken_cpp(const casebook_recorder *r) {
  return drive<false, false>(r);
}

extern "C" int casebook_async_free_race_fixed_cpp(const casebook_recorder *r) {
  return drive<true, false>(r);
}

// ANCHOR: trimmed
// The control of "it first attempts to fulfill it from these cached
// blocks": fixed, with the pool emptied before each next request.
extern "C" int casebook_async_free_race_trimmed_cpp(const casebook_recorder *r) {
  return drive<true, true>(r);
}
// ANCHOR_END: trimmed
