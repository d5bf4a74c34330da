// invalid-launch-config, C++: the same launches through the runtime API, as
// an extension's host code makes them.

#include "casebook.h"
#include "names.h"

#include <algorithm>
#include <vector>

using namespace casebook;

// Columns of each row; a batch's rows go on the grid's y dimension.
static const int kCols = 64;
static const int kBlock = 64;
// The most block rows a grid may have (cudaDevAttrMaxGridDimY on every GPU
// since compute capability 2.0).
static const int kMaxRows = 65535;

static __global__ void addRow(float *out, const float *in, int rows, int cols) {
  int row = blockIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows && col < cols) out[(long long)row * cols + col] = in[(long long)row * cols + col] + float(row);
}

static __global__ void addRowStrided(float *out, const float *in, int rows, int cols) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= cols) return;
  for (int row = blockIdx.y; row < rows; row += gridDim.y)
    out[(long long)row * cols + col] = in[(long long)row * cols + col] + float(row);
}

static __global__ void scale(float *data, int n, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

// The grid of one block row per row.
static dim3 grid_of(int rows) { return dim3((kCols + kBlock - 1) / kBlock, rows); }

// A batch on the device: its input (each element its column), and its
// output filled with -1 so that rows no kernel wrote can be told.
struct Batch {
  int rows;
  float *in = nullptr, *out = nullptr;
  cudaError_t alloc(const casebook_recorder *r) {
    size_t n = size_t(std::max(rows, 1)) * kCols;
    std::vector<float> host(n), unset(n, -1.0f);
    for (size_t i = 0; i < n; ++i) host[i] = float(i % kCols);
    cudaError_t err = rec(r, "cudaMalloc (in)", cudaMalloc((void **)&in, n * sizeof(float)));
    keep_first_error(err, rec(r, "cudaMalloc (out)", cudaMalloc((void **)&out, n * sizeof(float))));
    keep_first_error(err, rec(r, "cudaMemcpy (in)", cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice)));
    keep_first_error(err, rec(r, "cudaMemcpy (out, -1)", cudaMemcpy(out, unset.data(), n * sizeof(float), cudaMemcpyHostToDevice)));
    return err;
  }
  // The output, copied back into `got`: whether the copy succeeded.
  bool read(const casebook_recorder *r, std::vector<float> &got) {
    got.resize(size_t(rows) * kCols);
    return rec(r, "cudaMemcpy (out)", cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost)) ==
           cudaSuccess;
  }
  // Whether every row still holds the -1 it was filled with: no kernel wrote it.
  bool untouched(const casebook_recorder *r) {
    std::vector<float> got;
    return read(r, got) && std::all_of(got.begin(), got.end(), [](float x) { return x == -1.0f; });
  }
  // Whether every row holds its input plus its index.
  bool right(const casebook_recorder *r) {
    std::vector<float> got;
    if (!read(r, got)) return false;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != float(i % kCols) + float(i / kCols)) return false;
    return true;
  }
  // A batch made and run later in the process, the kernel launched with one
  // block row per row whatever the allocation did: whether it was made, ran
  // and wrote every row right.
  static bool later(const casebook_recorder *r, int rows, const char *label) {
    Batch batch{rows};
    bool made = batch.alloc(r) == cudaSuccess;
    addRow<<<grid_of(rows), kBlock>>>(batch.out, batch.in, batch.rows, kCols);
    bool launched = rec(r, label, cudaGetLastError()) == cudaSuccess;
    return made && launched && batch.right(r);
  }
  ~Batch() {
    cudaFree(in);
    cudaFree(out);
  }
};

// ANCHOR: broken
extern "C" int casebook_invalid_launch_config_broken_cpp(const casebook_recorder *r) {
  Batch batch{kMaxRows + 1};
  if (batch.alloc(r) != cudaSuccess) return 0;
  // BUG: one block row per row of the batch; a grid has at most 65535.
  addRow<<<grid_of(batch.rows), kBlock>>>(batch.out, batch.in, batch.rows, kCols);
  cudaError_t err = rec(r, "addRow<<<(1, 65536), 64>>>", cudaGetLastError());
  if (err != cudaSuccess) fact_text(r, names::MESSAGE, cudaGetErrorString(err));
  // ANCHOR_END: broken
  if (err != cudaSuccess) fact(r, names::NOTHING_RAN, batch.untouched(r));
  check(r, names::RESULTS_RIGHT, err == cudaSuccess && batch.right(r));
  // The same kernel with the largest batch its grid holds, in the same process.
  fact(r, names::AT_LIMIT_RUNS, Batch::later(r, kMaxRows, "later: addRow<<<(1, 65535), 64>>>"));
  return 0;
}

// ANCHOR: empty_batch
extern "C" int casebook_invalid_launch_config_empty_batch_cpp(const casebook_recorder *r) {
  Batch batch{0};
  if (batch.alloc(r) != cudaSuccess) return 0;
  // BUG: a batch with no rows still launches: a grid of zero block rows.
  addRow<<<grid_of(batch.rows), kBlock>>>(batch.out, batch.in, batch.rows, kCols);
  cudaError_t err = rec(r, "addRow<<<(1, 0), 64>>>", cudaGetLastError());
  if (err != cudaSuccess) fact_text(r, names::MESSAGE, cudaGetErrorString(err));
  // ANCHOR_END: empty_batch
  fact(r, names::LATER_CALL, Batch::later(r, 1, "later: addRow<<<(1, 1), 64>>>"));
  return 0;
}

// ANCHOR: unchecked
extern "C" int casebook_invalid_launch_config_unchecked_cpp(const casebook_recorder *r) {
  Batch batch{kMaxRows + 1};
  if (batch.alloc(r) != cudaSuccess) return 0;
  // BUG: the launch is not checked.
  addRow<<<grid_of(batch.rows), kBlock>>>(batch.out, batch.in, batch.rows, kCols);
  // A later, valid launch of another kernel, checked.
  std::vector<float> ones(1024, 1.0f), got(1024);
  float *other = nullptr;
  rec(r, "cudaMalloc (other)", cudaMalloc((void **)&other, sizeof(float) * 1024));
  rec(r, "cudaMemcpy (other)", cudaMemcpy(other, ones.data(), sizeof(float) * 1024, cudaMemcpyHostToDevice));
  scale<<<4, 256>>>(other, 1024, 2.0f);
  cudaError_t err = rec(r, "scale<<<4, 256>>> (its own check)", cudaGetLastError());
  // ANCHOR_END: unchecked
  if (err != cudaSuccess) fact_text(r, names::MESSAGE, cudaGetErrorString(err));
  fact(r, names::BLAMED_ON_LATER_LAUNCH, err != cudaSuccess);
  bool ran = rec(r, "cudaMemcpy (other, back)", cudaMemcpy(got.data(), other, sizeof(float) * 1024, cudaMemcpyDeviceToHost)) == cudaSuccess &&
             std::all_of(got.begin(), got.end(), [](float x) { return x == 2.0f; });
  fact(r, names::LATER_KERNEL_RAN, ran);
  check(r, names::RESULTS_RIGHT, batch.right(r));
  cudaFree(other);
  return 0;
}

// ANCHOR: fixed
// FIX: at most 65535 block rows, each striding over the rows; no launch for
// an empty batch; every launch checked.
static cudaError_t add_rows(const casebook_recorder *r, Batch &batch, const char *label) {
  if (batch.rows == 0) return cudaSuccess;
  addRowStrided<<<grid_of(std::min(batch.rows, kMaxRows)), kBlock>>>(batch.out, batch.in, batch.rows, kCols);
  return rec(r, label, cudaGetLastError());
}

extern "C" int casebook_invalid_launch_config_fixed_cpp(const casebook_recorder *r) {
  Batch batch{kMaxRows + 1}, empty{0};
  if (batch.alloc(r) != cudaSuccess || empty.alloc(r) != cudaSuccess) return 0;
  cudaError_t err = add_rows(r, batch, "addRowStrided<<<(1, 65535), 64>>> (65536 rows)");
  keep_first_error(err, add_rows(r, empty, "no launch (0 rows)"));
  check(r, names::RESULTS_RIGHT, err == cudaSuccess && batch.right(r));
  return 0;
}
// ANCHOR_END: fixed
