// host-memory-leak, C++: seed 003, example 2, made complete.
//
// The article's call allocates h_data with new, copies it to the device,
// frees the device buffer and forgets `delete[] h_data`. The broken call
// fills h_data (a real input) and also stages it through a pinned buffer
// from cudaMallocHost that it never frees; the fixed call frees both.

#include <algorithm>
#include <cstdlib>
#include <unistd.h>

#include "casebook.h"
#include "names.h"

using namespace casebook;

static const int kCalls = 64;
static const size_t kTolerance = size_t(64) << 20;

static size_t resident_bytes() {
  long pages = 0, resident = 0;
  FILE *f = std::fopen("/proc/self/statm", "r");
  if (f) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

template <bool kFixed>
static cudaError_t model_call(const casebook_recorder *r) {
  // ANCHOR: call
  int size = 1024 * 1024;
  float *h_data = new float[size];  // Memory allocated on the host
  for (int i = 0; i < size; ++i) h_data[i] = (float)i;
  float *h_pinned;
  rec(r, "cudaMallocHost", cudaMallocHost((void **)&h_pinned, size * sizeof(float)));
  std::copy(h_data, h_data + size, h_pinned);
  float *d_data;
  rec(r, "cudaMalloc", cudaMalloc((void **)&d_data, size * sizeof(float)));
  cudaError_t err = rec(r, "cudaMemcpy HtoD", cudaMemcpy(d_data, h_pinned, size * sizeof(float), cudaMemcpyHostToDevice));

  // ... some CUDA operations ...

  rec(r, "cudaFree", cudaFree(d_data));  // Device memory released
  if (kFixed) {
    rec(r, "cudaFreeHost", cudaFreeHost(h_pinned));  // FIX
    delete[] h_data;                                 // FIX
  }
  // broken: Missing: delete[] h_data; // Host memory leak!  (and cudaFreeHost(h_pinned))
  // ANCHOR_END: call
  return err;
}

template <bool kFixed>
static int drive(const casebook_recorder *r) {
  model_call<kFixed>(r);  // warm-up, so the baseline includes the runtime's own buffers
  size_t host_before = resident_bytes();
  size_t device_before = free_bytes(r);
  for (int c = 0; c < kCalls; ++c) {
    Iteration it(r, "model call");
    model_call<kFixed>(r);
    point(r, names::RESIDENT_BYTES, c + 1, (double)resident_bytes());
  }
  size_t host_after = resident_bytes();
  size_t device_after = free_bytes(r);
  measure(r, names::RESIDENT_BEFORE, (double)host_before);
  measure(r, names::RESIDENT_AFTER, (double)host_after);
  measure(r, names::DEVICE_FREE_BEFORE, (double)device_before);
  measure(r, names::DEVICE_FREE_AFTER, (double)device_after);
  size_t grown = host_after > host_before ? host_after - host_before : 0;
  double per_call = (double)grown / kCalls, one_call = 2.0 * 1024 * 1024 * sizeof(float);
  measure(r, names::RESIDENT_GROWTH_PER_CALL, per_call);
  fact_text(r, names::PER_CALL,
            grown < kTolerance                               ? "nothing"
            : std::abs(per_call - one_call) < one_call / 4.0 ? "about one call's host and pinned buffers"
                                                             : "something other than one call's buffers");
  size_t moved = device_before > device_after ? device_before - device_after : device_after - device_before;
  fact(r, names::DEVICE_MOVED, moved > kTolerance);
  check(r, names::BACK, grown < kTolerance);
  return 0;
}

extern "C" int casebook_host_memory_leak_broken_cpp(const casebook_recorder *r) { return drive<false>(r); }

extern "C" int casebook_host_memory_leak_fixed_cpp(const casebook_recorder *r) { return drive<true>(r); }
