// invalid-device-ordinal, C++: the job selects its GPU with cudaSetDevice
// and the ordinal from its configuration, one past the last GPU this
// process sees (`--gpu 1` on a machine with one GPU); then it does its work.

#include "casebook.h"
#include "names.h"

using namespace casebook;

static const size_t kBytes = 4096;

// The job's work on the selected GPU: a buffer written and freed.
static cudaError_t work(const casebook_recorder *r) {
  void *d = nullptr;
  cudaError_t err = rec(r, "cudaMalloc", cudaMalloc(&d, kBytes));
  if (err != cudaSuccess) return err;
  err = rec(r, "cudaMemset", cudaMemset(d, 1, kBytes));
  cudaError_t freed = rec(r, "cudaFree", cudaFree(d));
  return err != cudaSuccess ? err : freed;
}

static int devices_seen(const casebook_recorder *r) {
  int seen = 0;
  if (rec(r, "cudaGetDeviceCount", cudaGetDeviceCount(&seen)) != cudaSuccess) return -1;
  measure(r, names::DEVICES_SEEN, (double)seen);
  fact_text(r, names::ORDINAL, "one past the last GPU the process sees");
  return seen;
}

extern "C" int casebook_invalid_device_ordinal_broken_cpp(const casebook_recorder *r) {
  int seen = devices_seen(r);
  if (seen < 0) return 1;
  // ANCHOR: broken
  int ordinal = seen;  // BUG: the GPU from the job's configuration, which this process does not see
  cudaError_t err = rec(r, "cudaSetDevice (the configured ordinal)", cudaSetDevice(ordinal));
  if (err == cudaSuccess) err = work(r);
  // ANCHOR_END: broken
  check(r, names::RAN, err == cudaSuccess);
  return 0;
}

extern "C" int casebook_invalid_device_ordinal_fixed_cpp(const casebook_recorder *r) {
  int seen = devices_seen(r);
  if (seen < 0) return 1;
  // ANCHOR: fixed
  int configured = seen;            // the same configuration as the broken program
  int ordinal = configured % seen;  // FIX: an ordinal this process sees
  cudaError_t err = rec(r, "cudaSetDevice (an ordinal the process sees)", cudaSetDevice(ordinal));
  if (err == cudaSuccess) err = work(r);
  // ANCHOR_END: fixed
  check(r, names::RAN, err == cudaSuccess);
  return 0;
}
