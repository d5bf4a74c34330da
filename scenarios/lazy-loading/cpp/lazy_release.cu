// lazy-loading, C++: the releasing kernel, in a file of its own, with the
// calls that launch it and load it.

#include <cuda_runtime.h>

__global__ void release(unsigned int *flag) {
  *(volatile unsigned int *)flag = 1;
  __threadfence_system();
}

extern "C" cudaError_t casebook_lazy_release_launch(unsigned int *flag, cudaStream_t s) {
  release<<<1, 1, 0, s>>>(flag);
  return cudaGetLastError();
}

// cudaFuncGetAttributes loads the kernel (Programming Guide, Lazy Loading).
extern "C" cudaError_t casebook_lazy_release_preload() {
  cudaFuncAttributes attributes;
  return cudaFuncGetAttributes(&attributes, release);
}
