#include "spin.cuh"

// Waits `spin_ns`, then fills `out` with `value`. The host that reads `out`
// without synchronising is certain to read before the fill.
extern "C" __global__ void spin_then_fill(float *out, int n, float value,
                                          unsigned long long spin_ns) {
  casebook_spin_ns(spin_ns);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i] = value;
  }
}

// Waits `spin_ns`, then copies `in` to `out`. Whatever another stream does
// to `in` during the wait is what gets copied.
extern "C" __global__ void spin_then_copy(const float *in, float *out, int n,
                                          unsigned long long spin_ns) {
  casebook_spin_ns(spin_ns);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i] = in[i];
  }
}
