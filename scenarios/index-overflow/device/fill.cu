#include "fill.cuh"

extern "C" __global__ void fill_int_index(float *out, long long n) { casebook_fill_int_index(out, n); }

extern "C" __global__ void fill_64bit_index(float *out, long long n, long long *last_block_offset) {
  casebook_fill_64bit_index(out, n, last_block_offset);
}

extern "C" __global__ void count_unset(const float *out, long long n, unsigned long long *unset) {
  casebook_count_unset(out, n, unset);
}
