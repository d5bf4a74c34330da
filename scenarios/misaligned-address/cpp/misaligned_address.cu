// misaligned-address, C++: a record of one float of header, then the data.
// The kernel reads the data as float4, 16 bytes per load, for speed; the
// data starts 4 bytes into the buffer, so no float4 of it is aligned.

#include "casebook.h"
#include "names.h"
#include "scale.cuh"

#include <cstdint>
#include <vector>

using namespace casebook;

static const int kN = 1 << 20;  // floats of data, a multiple of 4
static const int kHeader = 1;   // floats before the data in the same buffer

static __global__ void scale4Kernel(const float *in, float *out, int n) { casebook_scale4(in, out, n); }
static __global__ void scale1Kernel(const float *in, float *out, int n) { casebook_scale1(in, out, n); }

struct Buffers {
  float *record = nullptr;  // header + data
  float *out = nullptr;
};

static cudaError_t setup(const casebook_recorder *r, Buffers *b) {
  std::vector<float> host(kHeader + kN);
  for (int i = 0; i < kHeader + kN; ++i) host[i] = float(i % 1000);
  cudaError_t err = rec(r, "cudaMalloc (record)", cudaMalloc((void **)&b->record, host.size() * sizeof(float)));
  if (err == cudaSuccess) err = rec(r, "cudaMalloc (out)", cudaMalloc((void **)&b->out, kN * sizeof(float)));
  if (err == cudaSuccess)
    err = rec(r, "cudaMemcpy (record)",
              cudaMemcpy(b->record, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  fact(r, names::OFFSET, (long long)(kHeader * sizeof(float)));
  return err;
}

// Copies the result back and compares it with the CPU's; then one call that
// has nothing to do with the kernel, to see whether the process can still
// use the GPU.
static void finish(const casebook_recorder *r, const Buffers &b, cudaError_t err) {
  std::vector<float> got(kN);
  if (err == cudaSuccess)
    err = rec(r, "cudaMemcpy (result)", cudaMemcpy(got.data(), b.out, kN * sizeof(float), cudaMemcpyDeviceToHost));
  bool same = err == cudaSuccess;
  for (int i = 0; same && i < kN; ++i) same = got[i] == 2.0f * float((kHeader + i) % 1000);
  check(r, names::MATCHES, same);
  if (later_call(r, names::LATER_CALL)) {
    cudaFree(b.record);
    cudaFree(b.out);
  }
}

extern "C" int casebook_misaligned_address_broken_cpp(const casebook_recorder *r) {
  Buffers b;
  cudaError_t err = setup(r, &b);
  if (err != cudaSuccess) return err;
  // ANCHOR: broken
  const float *data = b.record + kHeader;  // 4 bytes into a 256-byte aligned buffer
  scale4Kernel<<<(kN / 4 + 255) / 256, 256>>>(data, b.out, kN);  // BUG: float4 loads at data
  err = rec(r, "scale4<<<>>>", cudaGetLastError());
  if (err == cudaSuccess) err = rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  // ANCHOR_END: broken
  fact(r, names::ALIGNED, reinterpret_cast<std::uintptr_t>(data) % 16 == 0);
  fact_text(r, names::LOADS, "float4 (16 bytes)");
  finish(r, b, err);
  return 0;
}

extern "C" int casebook_misaligned_address_fixed_cpp(const casebook_recorder *r) {
  Buffers b;
  cudaError_t err = setup(r, &b);
  if (err != cudaSuccess) return err;
  // ANCHOR: fixed
  const float *data = b.record + kHeader;
  bool aligned = reinterpret_cast<std::uintptr_t>(data) % 16 == 0 && kN % 4 == 0;
  if (aligned) {  // FIX: vector loads only where the address allows them
    scale4Kernel<<<(kN / 4 + 255) / 256, 256>>>(data, b.out, kN);
  } else {
    scale1Kernel<<<(kN + 255) / 256, 256>>>(data, b.out, kN);
  }
  err = rec(r, aligned ? "scale4<<<>>>" : "scale1<<<>>>", cudaGetLastError());
  if (err == cudaSuccess) err = rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  // ANCHOR_END: fixed
  fact(r, names::ALIGNED, aligned);
  fact_text(r, names::LOADS, aligned ? "float4 (16 bytes)" : "float (4 bytes)");
  finish(r, b, err);
  return 0;
}
