// The recorder as the C++ variants see it. Same layout as
// `casebook_model::CRecorder`: the harness fills it, the variant calls it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

extern "C" {
typedef struct casebook_recorder {
  void *ctx;
  void (*step)(void *ctx, const char *call, const char *result, int tolerated);
  void (*check)(void *ctx, const char *name, int ok);
  void (*fact)(void *ctx, const char *key, const char *json_value);
  void (*measure)(void *ctx, const char *key, double value, int unit);
  void (*point)(void *ctx, const char *series, double x, double y);
  void (*iteration)(void *ctx, const char *label);  // label NULL: the iteration ends
} casebook_recorder;
}

namespace casebook {

enum Unit { Bytes = 0, Count = 1, Seconds = 2, Ratio = 3 };

// Records a runtime call by name and passes its result through, so a
// variant reads like the article's code: `rec(r, "cudaMalloc", cudaMalloc(..))`.
inline cudaError_t rec(const casebook_recorder *r, const char *call, cudaError_t err) {
  r->step(r->ctx, call, cudaGetErrorName(err), 0);
  return err;
}

// The same for an error the variant provokes on purpose.
inline cudaError_t tolerate(const casebook_recorder *r, const char *call, cudaError_t err) {
  r->step(r->ctx, call, cudaGetErrorName(err), 1);
  return err;
}

inline bool check(const casebook_recorder *r, const char *name, bool ok) {
  r->check(r->ctx, name, ok ? 1 : 0);
  return ok;
}

inline void fact(const casebook_recorder *r, const char *key, bool value) {
  r->fact(r->ctx, key, value ? "true" : "false");
}

inline void fact(const casebook_recorder *r, const char *key, long long value) {
  char json[32];
  std::snprintf(json, sizeof json, "%lld", value);
  r->fact(r->ctx, key, json);
}

inline void fact_text(const casebook_recorder *r, const char *key, const char *value) {
  char json[256];
  std::snprintf(json, sizeof json, "\"%s\"", value);
  r->fact(r->ctx, key, json);
}

inline void measure(const casebook_recorder *r, const char *key, double value, Unit unit) {
  r->measure(r->ctx, key, value, unit);
}

inline void point(const casebook_recorder *r, const char *series, double x, double y) {
  r->point(r->ctx, series, x, y);
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
// a reduced form; records that it does.
inline bool under_sanitizer(const casebook_recorder *r) {
  bool under = std::getenv("CASEBOOK_SANITIZER") != nullptr;
  if (under) fact(r, "reduced for the sanitizer", true);
  return under;
}

// Free device memory now, as cudaMemGetInfo reports it.
inline size_t free_bytes(const casebook_recorder *r) {
  size_t free = 0, total = 0;
  rec(r, "cudaMemGetInfo", cudaMemGetInfo(&free, &total));
  return free;
}

} // namespace casebook
