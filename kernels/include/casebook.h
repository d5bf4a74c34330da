// The recorder as the C++ variants see it. Same layout as
// `casebook_model::CRecorder`: the harness fills it, the variant calls it.
// Names are typed: a variant records only the names its scenario declares in
// src/names.rs, which the build writes into the generated "names.h".
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

extern "C" {
typedef struct casebook_recorder {
  void *ctx;
  // message: the library's sentence for a failed call (NULL on success).
  void (*step)(void *ctx, const char *call, const char *result, const char *message, int tolerated);
  void (*check)(void *ctx, const char *name, int ok);
  void (*fact)(void *ctx, const char *key, const char *json_value);
  void (*measure)(void *ctx, const char *key, double value, int unit);
  void (*point)(void *ctx, const char *series, const char *x_label, int y_unit, double x,
                double y);
  void (*iteration)(void *ctx, const char *label);  // label NULL: the iteration ends
  // The memory NVML counts for this process: 1 and *bytes, or 0 (see own_memory below).
  int (*own_memory)(void *ctx, unsigned long long *bytes);
  // Interleaved pairs compared: 1 A larger, -1 B larger, 0 neither (see compare_pairs below).
  int (*compare_pairs)(void *ctx, const double *a, const double *b, size_t n, double least,
                       double ratio, double *median_ratio);
} casebook_recorder;
}

namespace casebook {

// The codes of `casebook_model::Unit`.
enum Unit { Bytes = 0, Count = 1, Seconds = 2, Ratio = 3, Factor = 4 };

// A name of the scenario's vocabulary; the generated names.h holds them.
struct CheckName {
  const char *text;
};
struct FactName {
  const char *text;
};
struct MeasureName {
  const char *text;
  Unit unit;
};
struct SeriesName {
  const char *text;
  const char *x_label;
  Unit y_unit;
};

// Records a runtime call by name and passes its result through, so a
// variant reads like the article's code: `rec(r, "cudaMalloc", cudaMalloc(..))`.
inline cudaError_t rec(const casebook_recorder *r, const char *call, cudaError_t err) {
  r->step(r->ctx, call, cudaGetErrorName(err), err == cudaSuccess ? nullptr : cudaGetErrorString(err), 0);
  return err;
}

// The same for an error the variant provokes on purpose.
inline cudaError_t tolerate(const casebook_recorder *r, const char *call, cudaError_t err) {
  r->step(r->ctx, call, cudaGetErrorName(err), err == cudaSuccess ? nullptr : cudaGetErrorString(err), 1);
  return err;
}

// Keeps the first error of several calls recorded as one step (a loop of
// frees): `first` takes `err` only while it still holds cudaSuccess, so a
// later error does not hide the first. Every call is made whatever `first`
// holds: `keep_first_error(freed, cudaFree(p));`.
inline void keep_first_error(cudaError_t &first, cudaError_t err) {
  if (first == cudaSuccess) first = err;
}

inline bool check(const casebook_recorder *r, CheckName name, bool ok) {
  r->check(r->ctx, name.text, ok ? 1 : 0);
  return ok;
}

inline void fact(const casebook_recorder *r, FactName name, bool value) {
  r->fact(r->ctx, name.text, value ? "true" : "false");
}

inline void fact(const casebook_recorder *r, FactName name, long long value) {
  char json[32];
  std::snprintf(json, sizeof json, "%lld", value);
  r->fact(r->ctx, name.text, json);
}

inline void fact_text(const casebook_recorder *r, FactName name, const char *value) {
  char json[256];
  std::snprintf(json, sizeof json, "\"%s\"", value);
  r->fact(r->ctx, name.text, json);
}

// After a kernel that may have faulted: one call that has nothing to do with
// it (cudaMalloc and cudaFree of 1 MiB), recorded as provoked, its result's
// name recorded as `fact`. Returns whether the context still works; where it
// does not, the variant's buffers cannot be freed.
inline bool later_call(const casebook_recorder *r, FactName fact) {
  void *probe = nullptr;
  cudaError_t later = tolerate(r, "cudaMalloc (unrelated, after the kernel)", cudaMalloc(&probe, 1 << 20));
  fact_text(r, fact, cudaGetErrorName(later));
  if (later == cudaSuccess) cudaFree(probe);
  return later == cudaSuccess;
}

inline void measure(const casebook_recorder *r, MeasureName name, double value) {
  r->measure(r->ctx, name.text, value, name.unit);
}

inline void point(const casebook_recorder *r, SeriesName series, double x, double y) {
  r->point(r->ctx, series.text, series.x_label, series.y_unit, x, y);
}

// Marks one iteration of a loop for as long as it lives, so the snapshot can
// fold identical iterations: `{ Iteration it(r, "model call"); ... }`.
class Iteration {
 public:
  Iteration(const casebook_recorder *r, const char *label) : r_(r) { r_->iteration(r_->ctx, label); }
  ~Iteration() { r_->iteration(r_->ctx, nullptr); }
  Iteration(const Iteration &) = delete;
  Iteration &operator=(const Iteration &) = delete;

 private:
  const casebook_recorder *r_;
};

// Whether the variant runs under compute-sanitizer, where heavy variants run
// a reduced form; records `reduced` when it does. names.h defines the
// one-argument form with the declared name.
inline bool under_sanitizer(const casebook_recorder *r, FactName reduced) {
  bool under = std::getenv("CASEBOOK_SANITIZER") != nullptr;
  if (under) fact(r, reduced, true);
  return under;
}

// The device memory this process holds, as NVML counts it: the Rust
// recorder's `casebook_model::device::own_memory`, its NVML calls recorded as
// steps. Unlike free memory it is this process's own, whatever runs beside
// it. False where NVML lists no memory for the process.
inline bool own_memory(const casebook_recorder *r, unsigned long long *bytes) {
  return r->own_memory(r->ctx, bytes) != 0;
}

// Which side of interleaved pairs (a[i], b[i]) is larger, decided by the one
// rule the Rust variants use (`casebook_model::timing::compare_pairs`): A when
// the median of a / b is at least `ratio`, the median of a - b at least
// `least`, and A is the larger in four pairs of five; B likewise; else
// neither. The median of a / b goes to *median_ratio unless it is null.
enum class Larger { B = -1, Neither = 0, A = 1 };

inline Larger compare_pairs(const casebook_recorder *r, const double *a, const double *b, size_t n,
                            double least, double ratio, double *median_ratio = nullptr) {
  int larger = r->compare_pairs(r->ctx, a, b, n, least, ratio, median_ratio);
  return larger > 0 ? Larger::A : larger < 0 ? Larger::B : Larger::Neither;
}

// How many of `runs` runs showed a failure, in the words of the Rust
// variants (`casebook_model::runs_in_words`).
inline const char *runs_in_words(long long count, long long runs) {
  return count == 0 ? "none" : count == runs ? "every run" : "some runs (flaky: the scenario is not deterministic)";
}

// Free device memory now, as cudaMemGetInfo reports it.
inline size_t free_bytes(const casebook_recorder *r) {
  size_t free = 0, total = 0;
  rec(r, "cudaMemGetInfo", cudaMemGetInfo(&free, &total));
  return free;
}

} // namespace casebook
