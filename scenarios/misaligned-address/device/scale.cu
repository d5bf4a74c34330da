#include "scale.cuh"

extern "C" __global__ void scale4(const float *in, float *out, int n) { casebook_scale4(in, out, n); }

extern "C" __global__ void scale1(const float *in, float *out, int n) { casebook_scale1(in, out, n); }
