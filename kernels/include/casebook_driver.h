// Driver API calls from a C++ variant that links only the runtime: each
// function is looked up through cudaGetDriverEntryPointByVersion (the
// lookup recorded as a step), and each call recorded by the name
// cuGetErrorName gives its result.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdio>

#include "casebook.h"

namespace casebook {

// Looks `symbol` up as the driver of `version` (CUDA 12.5: 12050) has it.
template <class F>
static inline cudaError_t driver_entry(const casebook_recorder *r, const char *symbol, int version, F *f) {
  cudaDriverEntryPointQueryResult found;
  char label[96];
  std::snprintf(label, sizeof label, "cudaGetDriverEntryPointByVersion (%s)", symbol);
  cudaError_t err = rec(r, label, cudaGetDriverEntryPointByVersion(symbol, (void **)f, version, cudaEnableDefault, &found));
  return err == cudaSuccess && found != cudaDriverEntryPointSuccess ? cudaErrorSymbolNotFound : err;
}

// Records a driver call by its result's name and passes the result through;
// `tolerated`: an error the variant provokes, not a symptom of it.
static inline CUresult record_cu(const casebook_recorder *r, PFN_cuGetErrorName_v6000 error_name, const char *call,
                                 CUresult res, int tolerated) {
  const char *name = "CUDA_ERROR_UNKNOWN";
  error_name(res, &name);
  const char *message = nullptr;
  if (res != CUDA_SUCCESS) {
    // The driver's sentence for the error, as a user reads it: a lookup in
    // its table, unrecorded, that touches no context.
    static PFN_cuGetErrorString_v6000 error_string = nullptr;
    cudaDriverEntryPointQueryResult found;
    if (!error_string &&
        cudaGetDriverEntryPointByVersion("cuGetErrorString", (void **)&error_string, 6000, cudaEnableDefault, &found) !=
            cudaSuccess)
      error_string = nullptr;
    if (!error_string || error_string(res, &message) != CUDA_SUCCESS) message = nullptr;
  }
  r->step(r->ctx, call, name, message, tolerated);
  return res;
}

// A driver call whose error would be a symptom.
static inline CUresult rec_cu(const casebook_recorder *r, PFN_cuGetErrorName_v6000 error_name, const char *call,
                              CUresult res) {
  return record_cu(r, error_name, call, res, 0);
}

// A driver call whose error the variant provokes or expects.
static inline CUresult tolerate_cu(const casebook_recorder *r, PFN_cuGetErrorName_v6000 error_name, const char *call,
                                   CUresult res) {
  return record_cu(r, error_name, call, res, 1);
}

// keep_first_error (casebook.h) for driver calls' results.
inline void keep_first_error(CUresult &first, CUresult err) {
  if (first == CUDA_SUCCESS) first = err;
}

}  // namespace casebook
