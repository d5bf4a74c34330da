// The kernel of kernel-stack-overflow, shared by the Rust variants (loaded
// as a fatbin) and the C++ ones.
#pragma once

// Frames of this many floats, with the registers each call saves: 568 bytes
// per call on the thread's stack (ptxas, sm_90, nvcc 13.0).
#define CASEBOOK_FRAME 64

// A recursive walk, `depth` calls deep: each call keeps a frame of its own
// on the thread's stack (the compiler cannot know how deep it goes, so it
// cannot size the stack), and reads it back on the way up. The C++ variants
// run it on the CPU too, for the reference.
__host__ __device__ __noinline__ float casebook_walk(const float *x, int depth) {
  float frame[CASEBOOK_FRAME];
  for (int i = 0; i < CASEBOOK_FRAME; ++i) frame[i] = x[(depth + i) % CASEBOOK_FRAME] * float(i + 1);
  if (depth == 0) {
    float s = 0.0f;
    for (int i = 0; i < CASEBOOK_FRAME; ++i) s += frame[i];
    return s;
  }
  return frame[depth % CASEBOOK_FRAME] + casebook_walk(x, depth - 1);
}

__device__ inline void casebook_walks(const float *x, float *out, int depth) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = casebook_walk(x, depth);
}
