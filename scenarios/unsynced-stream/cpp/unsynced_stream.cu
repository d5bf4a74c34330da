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
  fact_text(r, names::RATE, runs_in_words(stale, kRuns));
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
// reads both results. Its control (device-sync-after-cpp) synchronises after
// the reads instead.
template <bool SyncBeforeRead>
static int device_sync_reads(const casebook_recorder *r) {
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
    if (SyncBeforeRead) rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());  // waits for both streams
    // ANCHOR_END: device_sync
    for (int s = 0; s < 2; ++s)
      if (!holds(h_out[s], (float)(run + 1 + s))) ++stale;
    if (!SyncBeforeRead) rec(r, "cudaDeviceSynchronize (after the reads)", cudaDeviceSynchronize());
  }
  for (int s = 0; s < 2; ++s) {
    rec(r, "cudaStreamDestroy", cudaStreamDestroy(streams[s]));
    rec(r, "cudaFreeHost", cudaFreeHost(h_out[s]));
    rec(r, "cudaFree", cudaFree(d_out[s]));
  }
  measure(r, names::READS, 2 * kRuns);
  measure(r, names::STALE_READS, stale);
  fact_text(r, names::RATE, runs_in_words(stale, 2 * kRuns));
  check(r, names::FRESH, stale == 0);
  return 0;
}

extern "C" int casebook_unsynced_stream_device_sync_cpp(const casebook_recorder *r) {
  return device_sync_reads<true>(r);
}

// ANCHOR: device_sync_after
// The control: the same program, cudaDeviceSynchronize moved after the reads.
extern "C" int casebook_unsynced_stream_device_sync_after_cpp(const casebook_recorder *r) {
  return device_sync_reads<false>(r);
}
// ANCHOR_END: device_sync_after

// repeated: seed 000's "seemingly random errors, especially during repeated
// model invocations", with nothing made deterministic. Each invocation
// copies its input in, runs a short kernel and copies the result out on a
// non-blocking stream; the host prepares the next input meanwhile, reads
// the result, and only then synchronises. Whether the read is stale depends
// on which finishes first, the GPU's work or the host's: a race, measured
// at several sizes, 200 invocations each.
static const int kInvocations = 200;

static __global__ void model(const float *in, float *out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = in[i] * 2.0f + 1.0f;
}

// ANCHOR: repeated
template <bool SyncBeforeRead>
static bool invoke(const casebook_recorder *r, cudaStream_t stream, const float *h_in, float *h_next, float *h_out,
                   float *d_in, float *d_out, int n, float value) {
  rec(r, "cudaMemcpyAsync HtoD", cudaMemcpyAsync(d_in, h_in, n * sizeof(float), cudaMemcpyHostToDevice, stream));
  model<<<(n + 255) / 256, 256, 0, stream>>>(d_in, d_out, n);
  rec(r, "model<<<..., stream>>>", cudaGetLastError());
  rec(r, "cudaMemcpyAsync DtoH", cudaMemcpyAsync(h_out, d_out, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
  for (int i = 0; i < n; ++i) h_next[i] = value + 1.0f;  // the host prepares the next input
  // the control (repeated-synced-cpp) waits for the stream here
  if (SyncBeforeRead) rec(r, "cudaStreamSynchronize (before the read)", cudaStreamSynchronize(stream));
  bool right = true;
  for (int i = 0; i < n; ++i) right = right && h_out[i] == value * 2.0f + 1.0f;  // reads the result
  rec(r, "cudaStreamSynchronize (after the read)", cudaStreamSynchronize(stream));
  return right;
}
// ANCHOR_END: repeated

template <bool SyncBeforeRead>
static int invocations(const casebook_recorder *r) {
  const int sizes[] = {1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22};
  const int kMax = 1 << 22;
  cudaStream_t stream;
  float *d_in, *d_out, *h_in[2], *h_out;
  if (rec(r, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess) return 1;
  if (rec(r, "cudaMalloc (input)", cudaMalloc((void **)&d_in, kMax * sizeof(float))) != cudaSuccess) return 1;
  if (rec(r, "cudaMalloc (output)", cudaMalloc((void **)&d_out, kMax * sizeof(float))) != cudaSuccess) return 1;
  for (int b = 0; b < 2; ++b)
    if (rec(r, "cudaMallocHost (input)", cudaMallocHost((void **)&h_in[b], kMax * sizeof(float))) != cudaSuccess) return 1;
  if (rec(r, "cudaMallocHost (output)", cudaMallocHost((void **)&h_out, kMax * sizeof(float))) != cudaSuccess) return 1;
  int wrong_total = 0, calls = 0, intermittent_sizes = 0;
  for (int n : sizes) {
    Iteration it(r, "size");
    for (int i = 0; i < n; ++i) {
      h_in[0][i] = 1.0f;
      h_out[i] = kSentinel;
    }
    int wrong = 0;
    for (int k = 0; k < kInvocations; ++k) {
      float value = (float)(k + 1);
      if (!invoke<SyncBeforeRead>(r, stream, h_in[k % 2], h_in[(k + 1) % 2], h_out, d_in, d_out, n, value)) ++wrong;
    }
    point(r, names::WRONG_RATE_BY_SIZE, n, (double)wrong / kInvocations);
    if (wrong > 0 && wrong < kInvocations) ++intermittent_sizes;
    wrong_total += wrong;
    calls += kInvocations;
  }
  rec(r, "cudaStreamDestroy", cudaStreamDestroy(stream));
  for (int b = 0; b < 2; ++b) rec(r, "cudaFreeHost", cudaFreeHost(h_in[b]));
  rec(r, "cudaFreeHost", cudaFreeHost(h_out));
  rec(r, "cudaFree", cudaFree(d_in));
  rec(r, "cudaFree", cudaFree(d_out));
  measure(r, names::INVOCATIONS, calls);
  measure(r, names::WRONG_RESULTS, wrong_total);
  measure(r, names::SIZES_WITH_INTERMITTENT_WRONG_RESULTS, intermittent_sizes);
  fact(r, names::SOME_RESULT_IS_WRONG, wrong_total > 0);
  fact(r, names::WRONG_RESULTS_COME_AND_GO_AT_SOME_SIZE, intermittent_sizes > 0);
  return 0;
}

extern "C" int casebook_unsynced_stream_repeated_cpp(const casebook_recorder *r) {
  return invocations<false>(r);
}

// ANCHOR: repeated_synced
// The control of "seemingly random errors": repeated, with the stream
// waited for before the host reads the result.
extern "C" int casebook_unsynced_stream_repeated_synced_cpp(const casebook_recorder *r) {
  return invocations<true>(r);
}
// ANCHOR_END: repeated_synced
