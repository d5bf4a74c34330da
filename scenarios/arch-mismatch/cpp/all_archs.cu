// arch-mismatch, C++: the same launch, with the file compiled the usual way:
// machine code for sm_80 and sm_90, and compute_90 PTX.

#include "casebook.h"
#include "names.h"
#include "scale_kernel.cuh"

#include <vector>

using namespace casebook;

// ANCHOR: fixed
extern "C" int casebook_arch_mismatch_fixed_cpp(const casebook_recorder *r) {
  // FIX: -gencode for each target architecture, and PTX for the newest.
  cudaFuncAttributes attributes{};
  cudaError_t err = rec(r, "cudaFuncGetAttributes", cudaFuncGetAttributes(&attributes, scaleKernel));
  if (err != cudaSuccess) return err;
  int major = 0, minor = 0;
  rec(r, "cudaDeviceGetAttribute (major)", cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  rec(r, "cudaDeviceGetAttribute (minor)", cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  fact(r, names::MACHINE_CODE_FOR_DEVICE, attributes.binaryVersion == major * 10 + minor);

  std::vector<float> host(kElements, 1.0f);
  float *d_data = nullptr;
  err = rec(r, "cudaMalloc", cudaMalloc((void **)&d_data, kElements * sizeof(float)));
  if (err != cudaSuccess) return err;
  rec(r, "cudaMemcpy (to device)", cudaMemcpy(d_data, host.data(), kElements * sizeof(float), cudaMemcpyHostToDevice));
  scaleKernel<<<(kElements + 255) / 256, 256>>>(d_data, kElements, 2.0f);
  rec(r, "scaleKernel<<<>>>", cudaGetLastError());
  rec(r, "cudaMemcpy (to host)", cudaMemcpy(host.data(), d_data, kElements * sizeof(float), cudaMemcpyDeviceToHost));
  bool scaled = true;
  for (float x : host) scaled = scaled && x == 2.0f;
  check(r, names::SCALED, scaled);
  rec(r, "cudaFree", cudaFree(d_data));
  return 0;
}
// ANCHOR_END: fixed
