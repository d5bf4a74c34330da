// In-kernel allocation, as seed 003's example 1 does with `new float[..]`.

// Every thread asks the device heap for `floats` floats and counts a null.
// It writes nothing, so it can run under any heap size.
extern "C" __global__ void heap_probe(int n, int floats, unsigned int *nulls) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float *temp = new float[floats];
    if (temp == nullptr) {
      atomicAdd(nulls, 1u);
    } else {
      temp[0] = (float)i;  // touch it, as the processing would
      delete[] temp;
    }
  }
}

// The article's pattern: allocate, use, free, with no check for null.
extern "C" __global__ void heap_use_unchecked(const float *input, float *output, int n, int floats) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float *temp = new float[floats];
    for (int k = 0; k < floats; ++k) temp[k] = input[i];  // BUG: temp may be null
    output[i] = temp[floats - 1] * 2.0f;
    delete[] temp;
  }
}

// The same, with a null check that is counted rather than written through.
extern "C" __global__ void heap_use_checked(const float *input, float *output, int n, int floats,
                                            unsigned int *nulls) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float *temp = new float[floats];
    if (temp == nullptr) {
      atomicAdd(nulls, 1u);
      output[i] = 0.0f;
      return;
    }
    for (int k = 0; k < floats; ++k) temp[k] = input[i];
    output[i] = temp[floats - 1] * 2.0f;
    delete[] temp;
  }
}
