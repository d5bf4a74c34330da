// oversized-allocation, C++: seed 003, example 3.
//
// as-written: the article's program, on the whole GPU. broken and fixed:
// a model's weights leave 1 GiB free and the batch is 2 GiB; broken
// allocates it whole, fixed asks cudaMemGetInfo and streams it in tiles.

#include <vector>

#include "casebook.h"
#include "names.h"

using namespace casebook;

// What the article's main() returned from its two calls: kept by the two
// lines added to it, for the runs below to record.
static cudaError_t g_malloc, g_free;

// ANCHOR: as_written
static int article_main(const casebook_recorder *r) {
  int size = 1024 * 1024 * 1024; // Very large size for demonstration
  float* d_data;

  // Attempting to allocate a huge chunk of memory on the GPU at once.
  g_malloc = rec(r, "cudaMalloc", cudaMalloc((void**)&d_data, size * sizeof(float)));  // added: g_malloc =

  // ... further operations that would never be reached due to insufficient memory.
  // If your GPU doesn't have enough memory this line will generate error
  g_free = rec(r, "cudaFree", cudaFree(d_data));  // added: g_free =
  return 0;
}
// ANCHOR_END: as_written

static const size_t kPage = size_t(2) << 20;

// The article's program twice: on the whole GPU, then on a GPU with `left`
// free (a ballast stands in for a smaller card), followed there by a
// further operation, where the article has "// ... further operations".
static int as_written(const casebook_recorder *r, size_t left) {
  {
    Iteration it(r, "the article's program, whole GPU");
    article_main(r);
  }
  fact(r, names::THE_ARTICLE_S_4_GIB_ALLOCATION_SUCCEEDS, g_malloc == cudaSuccess);
  char text[32], ballast_call[64], beside[64];
  std::snprintf(text, sizeof text, "%zu GiB", left >> 30);
  std::snprintf(ballast_call, sizeof ballast_call, "cudaMalloc (ballast: leaves %zu GiB free)", left >> 30);
  std::snprintf(beside, sizeof beside, "the article's program, %zu GiB free", left >> 30);
  fact_text(r, names::FREE_BESIDE_THE_BALLAST, text);
  size_t free = free_bytes(r);
  if (free <= left + kPage) return 1;
  void *ballast;
  if (rec(r, ballast_call, cudaMalloc(&ballast, (free - left) / kPage * kPage)) != cudaSuccess)
    return 1;
  {
    Iteration it(r, beside);
    article_main(r);
  }
  fact(r, names::IT_SUCCEEDS_BESIDE_THE_BALLAST, g_malloc == cudaSuccess);
  fact_text(r, names::BESIDE_THE_BALLAST_CUDAMALLOC_RETURNS, cudaGetErrorName(g_malloc));
  fact_text(r, names::BESIDE_THE_BALLAST_THE_CUDAFREE_AFTER_IT_RETURNS, cudaGetErrorName(g_free));
  void *further;
  cudaError_t err = rec(r, "cudaMalloc (64 MiB: a further operation)", cudaMalloc(&further, size_t(64) << 20));
  if (err == cudaSuccess) err = rec(r, "cudaMemset (the further operation)", cudaMemset(further, 0, size_t(64) << 20));
  // Said of the operations after a failed allocation: recorded where it failed.
  if (g_malloc != cudaSuccess) fact(r, names::A_FURTHER_OPERATION_RUNS_AFTER_THE_FAILED_ALLOCATION, err == cudaSuccess);
  if (further && err == cudaSuccess) rec(r, "cudaFree", cudaFree(further));
  rec(r, "cudaFree (ballast)", cudaFree(ballast));
  return 0;
}

extern "C" int casebook_oversized_allocation_as_written_cpp(const casebook_recorder *r) {
  return as_written(r, size_t(2) << 30);
}

// ANCHOR: room_for_it
// The control of "worse on GPUs with limited VRAM" and of the failing line:
// the same program, the ballast leaving 8 GiB, room for the 4 GiB request.
extern "C" int casebook_oversized_allocation_room_for_it_cpp(const casebook_recorder *r) {
  return as_written(r, size_t(8) << 30);
}
// ANCHOR_END: room_for_it

// The batch, and what the weights leave free for it; an eighth of each in
// the reduced form for the sanitizer, where every kernel is instrumented.
static size_t kData = size_t(2) << 30, kLeftFree = size_t(1) << 30;

static __global__ void scaleKernel(float *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= 2.0f;
}

static void *g_weights = nullptr;

static const char *size_text(size_t bytes, char *buf, size_t n) {
  if (bytes >= (size_t(1) << 30)) std::snprintf(buf, n, "%zu GiB", bytes >> 30);
  else std::snprintf(buf, n, "%zu MiB", bytes >> 20);
  return buf;
}

static bool weights(const casebook_recorder *r) {
  if (under_sanitizer(r)) {
    kData /= 8;
    kLeftFree /= 8;
  }
  size_t free = free_bytes(r);
  size_t ballast = (free - kLeftFree) / kPage * kPage;
  if (rec(r, "cudaMalloc (the model's weights)", cudaMalloc(&g_weights, ballast)) != cudaSuccess) return false;
  measure(r, names::FREE_FOR_THE_BATCH, (double)free_bytes(r));
  char text[32];
  fact_text(r, names::FREE_MEMORY_LEFT_FOR_THE_BATCH, size_text(kLeftFree, text, sizeof text));
  fact_text(r, names::BATCH_SIZE, size_text(kData, text, sizeof text));
  return true;
}

// ANCHOR: broken
extern "C" int casebook_oversized_allocation_broken_cpp(const casebook_recorder *r) {
  if (!weights(r)) return 1;
  float *d_batch;
  cudaError_t err = rec(r, "cudaMalloc (the whole batch)", cudaMalloc((void **)&d_batch, kData));
  void *small;
  bool usable = rec(r, "cudaMalloc (64 MiB, after)", cudaMalloc(&small, size_t(64) << 20)) == cudaSuccess;
  fact(r, names::USABLE, usable);
  if (usable) rec(r, "cudaFree", cudaFree(small));
  rec(r, "cudaFree (the model's weights)", cudaFree(g_weights));
  return (int)err;
}
// ANCHOR_END: broken

// ANCHOR: fixed
extern "C" int casebook_oversized_allocation_fixed_cpp(const casebook_recorder *r) {
  if (!weights(r)) return 1;
  size_t n = kData / sizeof(float);
  std::vector<float> input(n), output(n);
  for (size_t i = 0; i < n; ++i) input[i] = (float)(i % 4096);
  size_t free = free_bytes(r);
  size_t tile = std::min(free / 2 / kPage * kPage, kData) / sizeof(float);
  measure(r, names::TILE_BYTES, (double)(tile * sizeof(float)));
  float *d_tile;
  if (rec(r, "cudaMalloc (one tile)", cudaMalloc((void **)&d_tile, tile * sizeof(float))) != cudaSuccess) return 1;
  long long tiles = 0;
  for (size_t at = 0; at < n; at += tile) {
    Iteration it(r, "tile");
    size_t len = std::min(tile, n - at);
    rec(r, "cudaMemcpy HtoD", cudaMemcpy(d_tile, &input[at], len * sizeof(float), cudaMemcpyHostToDevice));
    scaleKernel<<<(len + 255) / 256, 256>>>(d_tile, (int)len);
    rec(r, "scaleKernel<<<>>>", cudaGetLastError());
    rec(r, "cudaMemcpy DtoH", cudaMemcpy(&output[at], d_tile, len * sizeof(float), cudaMemcpyDeviceToHost));
    ++tiles;
  }
  rec(r, "cudaFree", cudaFree(d_tile));
  rec(r, "cudaFree (the model's weights)", cudaFree(g_weights));
  measure(r, names::TILES_COUNT, (double)tiles);
  fact(r, names::TILES, tiles);
  bool right = true;
  for (size_t i = 0; i < n; ++i) right = right && output[i] == 2.0f * input[i];
  check(r, names::MATCHES, right);
  return 0;
}
// ANCHOR_END: fixed
