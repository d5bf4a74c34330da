// gencode: -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90 --compress-mode=size
// The library of library.cu with nothing but the kernel the program uses:
// the control of what lazy loading saves, where there is nothing to leave
// unloaded. Compressed, as library.cu is.

#include "library_body.cuh"

extern "C" __global__ void casebook_library_used(float *x, int n) { casebook_library_body<1024>(x, n); }
