// One block row per row of a batch, the way many extensions lay out their
// grids: blockIdx.x walks a row's columns, blockIdx.y picks the row.

// Each element plus its row's index. gridDim.y must be the batch's rows, so
// the batch is limited by the grid's y dimension (65535).
extern "C" __global__ void add_row(float *out, const float *in, int rows, int cols) {
  int row = blockIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows && col < cols) out[(long long)row * cols + col] = in[(long long)row * cols + col] + float(row);
}

// The same, with the rows strided over however many block rows the grid
// has: any batch runs on a grid of at most 65535 block rows.
extern "C" __global__ void add_row_strided(float *out, const float *in, int rows, int cols) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= cols) return;
  for (int row = blockIdx.y; row < rows; row += gridDim.y)
    out[(long long)row * cols + col] = in[(long long)row * cols + col] + float(row);
}

// add_row with the rows on the grid's z dimension, whose limit is y's.
extern "C" __global__ void add_row_z(float *out, const float *in, int rows, int cols) {
  int row = blockIdx.z;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows && col < cols) out[(long long)row * cols + col] = in[(long long)row * cols + col] + float(row);
}
