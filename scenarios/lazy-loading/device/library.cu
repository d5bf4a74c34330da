// gencode: -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90 --compress-mode=size
// A library of 1026 kernels, of which a program uses one: the case lazy
// loading is made for. Compressed, as NVIDIA's own libraries ship theirs.

#include "library_body.cuh"

template <int N>
__global__ void casebook_library_kernel(float *x, int n) { casebook_library_body<N>(x, n); }

#define CASEBOOK_I1(n) template __global__ void casebook_library_kernel<n>(float *, int);
#define CASEBOOK_I4(n) CASEBOOK_I1(n) CASEBOOK_I1(n + 1) CASEBOOK_I1(n + 2) CASEBOOK_I1(n + 3)
#define CASEBOOK_I16(n) CASEBOOK_I4(n) CASEBOOK_I4(n + 4) CASEBOOK_I4(n + 8) CASEBOOK_I4(n + 12)
#define CASEBOOK_I64(n) CASEBOOK_I16(n) CASEBOOK_I16(n + 16) CASEBOOK_I16(n + 32) CASEBOOK_I16(n + 48)
#define CASEBOOK_I256(n) CASEBOOK_I64(n) CASEBOOK_I64(n + 64) CASEBOOK_I64(n + 128) CASEBOOK_I64(n + 192)
CASEBOOK_I256(0)
CASEBOOK_I256(256)
CASEBOOK_I256(512)
CASEBOOK_I256(768)

// The kernel the program uses, and one it never does, by plain names.
extern "C" __global__ void casebook_library_used(float *x, int n) { casebook_library_body<1024>(x, n); }
extern "C" __global__ void casebook_library_unused(float *x, int n) { casebook_library_body<1025>(x, n); }
