// The kernel that waits: it spins until another kernel sets `flag`, the
// way a persistent kernel waits for work. It gives up after `limit_ns` so
// that a wait that never ends costs a few seconds, not a hung process.
// It is alone in its file, so it is a library of its own.

#include "lazy_loading.cuh"

extern "C" __global__ void wait_for_release(volatile unsigned int *flag, unsigned int *result,
                                            unsigned long long limit_ns) {
  casebook_wait_for_release(flag, result, limit_ns);
}
