// Busy-waits on the GPU's global nanosecond timer. Kernels that must still
// be running when the host acts (to make a race deterministic by
// construction, not by luck) start with this.
#pragma once

__device__ __forceinline__ unsigned long long casebook_globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void casebook_spin_ns(unsigned long long ns) {
  const unsigned long long start = casebook_globaltimer_ns();
  while (casebook_globaltimer_ns() - start < ns) {
  }
}
