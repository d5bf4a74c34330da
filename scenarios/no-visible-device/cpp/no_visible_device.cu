// no-visible-device, C++: the job sets CUDA_VISIBLE_DEVICES itself before
// its first CUDA call (a launcher script's `CUDA_VISIBLE_DEVICES=$GPU` with
// $GPU unset, an invalid entry ahead of the GPU), then counts the GPUs and
// works on the first. Where the value names no GPU, CUDA sees none:
// cudaGetDeviceCount returns cudaErrorNoDevice, "no CUDA-capable device is
// detected".

#include <cstdlib>
#include <string>

#include "casebook.h"
#include "names.h"

using namespace casebook;

static const size_t kBytes = 4096;

// The GPU the launcher gave this process, as it named it (the harness names
// one by UUID), or index 0 where it named none.
static std::string launcher_gpu() {
  const char *given = std::getenv("CUDA_VISIBLE_DEVICES");
  return given != nullptr && *given != '\0' ? std::string(given) : std::string("0");
}

// The job's work: count the GPUs CUDA sees, select the first, write a
// buffer there and free it.
static void work(const casebook_recorder *r) {
  int seen = 0;
  cudaError_t err = rec(r, "cudaGetDeviceCount", cudaGetDeviceCount(&seen));
  measure(r, names::DEVICES_SEEN, err == cudaSuccess ? (double)seen : 0.0);
  void *d = nullptr;
  if (err == cudaSuccess) err = rec(r, "cudaSetDevice(0)", cudaSetDevice(0));
  if (err == cudaSuccess) err = rec(r, "cudaMalloc", cudaMalloc(&d, kBytes));
  if (err == cudaSuccess) {
    err = rec(r, "cudaMemset", cudaMemset(d, 1, kBytes));
    keep_first_error(err, rec(r, "cudaFree", cudaFree(d)));
  }
  check(r, names::RAN, err == cudaSuccess);
}

extern "C" int casebook_no_visible_device_broken_cpp(const casebook_recorder *r) {
  // ANCHOR: broken
  const char *configured = "";  // `CUDA_VISIBLE_DEVICES=$GPU ./job` with $GPU unset
  setenv("CUDA_VISIBLE_DEVICES", configured, 1);  // BUG: a value that names no GPU
  // ANCHOR_END: broken
  fact_text(r, names::VISIBLE, "an empty string");
  work(r);
  return 0;
}

extern "C" int casebook_no_visible_device_fixed_cpp(const casebook_recorder *r) {
  // ANCHOR: fixed
  std::string configured = launcher_gpu();  // FIX: the GPU the launcher gave, never an empty value
  setenv("CUDA_VISIBLE_DEVICES", configured.c_str(), 1);
  // ANCHOR_END: fixed
  fact_text(r, names::VISIBLE, "the GPU the launcher gave");
  work(r);
  return 0;
}

// An invalid index (-1, the CUDA Programming Guide's own example) and the
// launcher's GPU, in the order `invalid_first` says.
static int drive(const casebook_recorder *r, bool invalid_first) {
  std::string gpu = launcher_gpu();
  std::string list = invalid_first ? "-1," + gpu : gpu + ",-1";
  setenv("CUDA_VISIBLE_DEVICES", list.c_str(), 1);
  fact_text(r, names::VISIBLE, invalid_first ? "-1, then the launcher's GPU" : "the launcher's GPU, then -1");
  // What the rule predicts for this list: the entries before the invalid one.
  measure(r, names::GPUS_LISTED_BEFORE_THE_INVALID_INDEX, invalid_first ? 0.0 : 1.0);
  work(r);
  return 0;
}

// ANCHOR: invalid_first
// A list with an invalid entry ahead of the GPU (`-1,0`): the GPU after it
// is not visible.
extern "C" int casebook_no_visible_device_invalid_first_cpp(const casebook_recorder *r) {
  return drive(r, true);
}
// ANCHOR_END: invalid_first

// ANCHOR: invalid_last
// The control: the same list with the invalid entry after the GPU (`0,-1`).
extern "C" int casebook_no_visible_device_invalid_last_cpp(const casebook_recorder *r) {
  return drive(r, false);
}
// ANCHOR_END: invalid_last
