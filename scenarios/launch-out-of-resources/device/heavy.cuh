// A kernel that keeps many values live at once: each thread mixes LIVE
// accumulators, all unrolled, so the compiler gives it as many registers
// as it can (about 120 on sm_80 and sm_90).
#pragma once

#define CASEBOOK_LIVE 96
#define CASEBOOK_ROUNDS 4

__host__ __device__ inline float casebook_mix(float x) {
  float acc[CASEBOOK_LIVE];
#pragma unroll
  for (int k = 0; k < CASEBOOK_LIVE; k++) acc[k] = x + k;
#pragma unroll
  for (int r = 0; r < CASEBOOK_ROUNDS; r++) {
#pragma unroll
    for (int k = 0; k < CASEBOOK_LIVE; k++)
      acc[k] = 0.5f * acc[k] + 0.25f * acc[(k + 1) % CASEBOOK_LIVE] + 0.25f * acc[(k + 7) % CASEBOOK_LIVE];
  }
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < CASEBOOK_LIVE; k++) s += acc[k];
  return s;
}
