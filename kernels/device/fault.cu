#include "spin.cuh"

// A "model call" with a bug: after `spin_ns` it writes through a null
// pointer, an illegal address. The wait makes the fault happen at a known
// time after the launch has returned.
extern "C" __global__ void spin_then_fault(unsigned long long spin_ns) {
  casebook_spin_ns(spin_ns);
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    *(volatile int *)nullptr = 1;
  }
}
