// gencode: -gencode=arch=compute_75,code=sm_75
// arch-mismatch, C++: this file is compiled as `nvcc -arch=sm_75` without
// PTX would compile it, machine code for compute capability 7.5 only. The
// runtime API loads the module when the kernel is first launched, so the
// launch is what fails.

#include "casebook.h"
#include "names.h"
#include "scale_kernel.cuh"

using namespace casebook;

// ANCHOR: broken
extern "C" int casebook_arch_mismatch_broken_cpp(const casebook_recorder *r) {
  float *d_data = nullptr;
  cudaError_t err = rec(r, "cudaMalloc", cudaMalloc((void **)&d_data, kElements * sizeof(float)));
  if (err != cudaSuccess) return err;
  // BUG: the only machine code in this file's module is for sm_75, and there is no PTX.
  scaleKernel<<<(kElements + 255) / 256, 256>>>(d_data, kElements, 2.0f);
  cudaError_t launch = rec(r, "scaleKernel<<<>>>", cudaGetLastError());
  fact_text(r, names::MESSAGE, cudaGetErrorString(launch));
  cudaError_t later = rec(r, "later call: cudaMemset", cudaMemset(d_data, 0, kElements * sizeof(float)));
  fact(r, names::LATER_CALL, later == cudaSuccess);
  rec(r, "cudaFree", cudaFree(d_data));
  return 0;
}
// ANCHOR_END: broken
