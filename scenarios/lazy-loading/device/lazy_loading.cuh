// The waiter's body, shared by the Rust variants' module (device/waiter.cu)
// and the C++ variants (cpp/lazy_loading.cu).
#pragma once

// What the waiter writes into `result`.
#define CASEBOOK_RELEASED 1u
#define CASEBOOK_GAVE_UP 2u

__device__ __forceinline__ unsigned long long casebook_now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void casebook_wait_for_release(volatile unsigned int *flag, unsigned int *result,
                                                          unsigned long long limit_ns) {
  const unsigned long long start = casebook_now_ns();
  while (*flag == 0) {
    if (casebook_now_ns() - start > limit_ns) {
      *result = CASEBOOK_GAVE_UP;
      return;
    }
  }
  *result = CASEBOOK_RELEASED;
}
