// The kernel both C++ variants launch: scales a buffer in place.
#pragma once

static __global__ void scaleKernel(float *data, int n, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

static const int kElements = 1 << 20;
