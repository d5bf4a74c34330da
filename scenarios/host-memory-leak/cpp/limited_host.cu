// host-memory-leak, C++: seed 003's example 2, "// ... further code
// execution that might fail due to lack of free host memory ...", on a host
// with little memory to spare: once CUDA has started, the process's data
// (RLIMIT_DATA, which counts what new and malloc take) is limited to what it
// uses then and 256 MiB more. The article's call is made until a call fails
// or 128 calls are made; in the control each call deletes its h_data. Then,
// still under the limit, CUDA is asked for 64 MiB on the device and 64 MiB
// of pinned host memory: what the leak leaves CUDA's allocations.

#include <cstdio>
#include <cstring>
#include <new>
#include <sys/resource.h>

#include "casebook.h"
#include "names.h"

using namespace casebook;

namespace {

const int kCalls = 128;
const size_t kRoom = size_t(256) << 20;

// What the limit counts, from /proc/self/status: the process's data
// (VmData, for RLIMIT_DATA: what new and malloc take) or its whole address
// space (VmSize, for RLIMIT_AS: every mapping, pinned host memory's too).
size_t counted_bytes(int resource) {
  const char *key = resource == RLIMIT_AS ? "VmSize:" : "VmData:";
  size_t kib = 0;
  FILE *f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, key, 7) == 0) kib = std::strtoull(line + 7, nullptr, 10);
  std::fclose(f);
  return kib << 10;
}

// The article's call. Returns the name of what failed, or nullptr.
const char *article_call(const casebook_recorder *r, bool fixed) {
  // ANCHOR: call
  int size = 1024 * 1024;
  float *h_data = new (std::nothrow) float[size];  // Memory allocated on the host
  if (h_data == nullptr) return "new float[size]";
  for (int i = 0; i < size; ++i) h_data[i] = (float)i;
  float *d_data;
  if (tolerate(r, "cudaMalloc", cudaMalloc((void **)&d_data, size * sizeof(float))) != cudaSuccess) return "cudaMalloc";
  if (tolerate(r, "cudaMemcpy HtoD", cudaMemcpy(d_data, h_data, size * sizeof(float), cudaMemcpyHostToDevice)) !=
      cudaSuccess)
    return "cudaMemcpy";

  // ... some CUDA operations ...

  tolerate(r, "cudaFree", cudaFree(d_data));  // Device memory released
  if (fixed) delete[] h_data;                 // the control's one change
  // Missing: delete[] h_data; // Host memory leak!
  // ANCHOR_END: call
  return nullptr;
}

int limited_host(const casebook_recorder *r, bool fixed, int resource = RLIMIT_DATA) {
  rec(r, "cudaFree(0)", cudaFree(0));
  article_call(r, fixed);  // CUDA's own buffers for a copy come before the limit
  struct rlimit old;
  getrlimit(resource, &old);
  struct rlimit limited = old;
  limited.rlim_cur = counted_bytes(resource) + kRoom;
  if (setrlimit(resource, &limited) != 0) return 1;
  const char *failed = nullptr;
  int calls = 0;
  while (calls < kCalls && failed == nullptr) {
    Iteration it(r, "the article's call");
    failed = article_call(r, fixed);
    if (failed == nullptr) ++calls;
  }
  // Under the same limit, what the calls left: CUDA's own allocations of
  // 64 MiB, on the device and pinned on the host.
  const size_t ask = size_t(64) << 20;
  void *device = nullptr, *pinned = nullptr;
  bool device_served = tolerate(r, "cudaMalloc (64 MiB, under the limit)", cudaMalloc(&device, ask)) == cudaSuccess;
  if (device_served) rec(r, "cudaFree", cudaFree(device));
  bool pinned_served =
      tolerate(r, "cudaMallocHost (64 MiB, under the limit)", cudaMallocHost(&pinned, ask)) == cudaSuccess;
  if (pinned_served) rec(r, "cudaFreeHost", cudaFreeHost(pinned));
  setrlimit(resource, &old);
  fact(r, names::UNDER_THE_LIMIT_CUDAMALLOC_IS_SERVED, device_served);
  fact(r, names::UNDER_THE_LIMIT_CUDAMALLOCHOST_IS_SERVED, pinned_served);
  measure(r, names::CALLS_MADE_UNDER_THE_LIMIT, calls);
  fact(r, names::A_CALL_FAILS_FOR_LACK_OF_HOST_MEMORY, failed != nullptr);
  fact_text(r, names::WHAT_FAILED_FIRST, failed ? failed : "nothing");
  return 0;
}

}  // namespace

// ANCHOR: limited_host
extern "C" int casebook_host_memory_leak_limited_host_cpp(const casebook_recorder *r) {
  return limited_host(r, false);
}
// ANCHOR_END: limited_host

// ANCHOR: limited_host_fixed
extern "C" int casebook_host_memory_leak_limited_host_fixed_cpp(const casebook_recorder *r) {
  return limited_host(r, true);
}
// ANCHOR_END: limited_host_fixed

// The same, with the process's whole address space limited (RLIMIT_AS): the
// limit counts every mapping, so memory CUDA maps for the process (pinned
// host memory) is held to it too, where RLIMIT_DATA lets it through.
// ANCHOR: limited_address_space
extern "C" int casebook_host_memory_leak_limited_address_space_cpp(const casebook_recorder *r) {
  return limited_host(r, false, RLIMIT_AS);
}
// ANCHOR_END: limited_address_space

// ANCHOR: limited_address_space_fixed
extern "C" int casebook_host_memory_leak_limited_address_space_fixed_cpp(const casebook_recorder *r) {
  return limited_host(r, true, RLIMIT_AS);
}
// ANCHOR_END: limited_address_space_fixed
