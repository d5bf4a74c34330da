// device-heap-exhaustion, C++: two of seed 003's and seed 004's claims about
// in-kernel allocation and large launches, measured.
//
// heap-fragmentation: many threads malloc small blocks until the device heap
// is full, every other block is freed, and one thread asks for a block larger
// than any hole but smaller than the free total. Meanwhile cudaMemGetInfo and
// a cudaMalloc of nearly all free memory show whether cudaMalloc's memory
// notices any of it.
//
// grid-size: one kernel with a per-thread local array and static shared
// memory, launched on grids from 1 block to 262,144; free device memory is
// read before the first launch and after each.

#include "casebook.h"
#include "names.h"

using namespace casebook;

namespace {

const size_t kHeap = 64ull << 20;
const size_t kSmall = 4096;
const int kSlots = (int)(kHeap / kSmall);
const size_t kLarge = 8ull << 20;  // larger than any hole, smaller than the holes together
const size_t kMargin = 512ull << 20;

__global__ void fill(void **slots, int n, size_t bytes) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) slots[i] = malloc(bytes);
}

__global__ void free_every_other(void **slots, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && i % 2 == 0 && slots[i] != nullptr) {
    free(slots[i]);
    slots[i] = nullptr;
  }
}

__global__ void free_all(void **slots, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && slots[i] != nullptr) {
    free(slots[i]);
    slots[i] = nullptr;
  }
}

// One thread asks for `bytes`, and gives it back at once.
__global__ void one_large(size_t bytes, int *served) {
  void *p = malloc(bytes);
  *served = p != nullptr;
  if (p != nullptr) free(p);
}

__global__ void count_live(void *const *slots, int n, int *live) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && slots[i] != nullptr) atomicAdd(live, 1);
}

int launch_count(const casebook_recorder *r, void **slots, int *d_int) {
  int live = 0;
  rec(r, "cudaMemset", cudaMemset(d_int, 0, sizeof(int)));
  count_live<<<(kSlots + 255) / 256, 256>>>(slots, kSlots, d_int);
  rec(r, "count_live<<<>>>", cudaGetLastError());
  rec(r, "cudaMemcpy DtoH", cudaMemcpy(&live, d_int, sizeof live, cudaMemcpyDeviceToHost));
  return live;
}

bool launch_large(const casebook_recorder *r, int *d_int, size_t large) {
  int served = 0;
  one_large<<<1, 1>>>(large, d_int);
  rec(r, "one_large<<<1, 1>>>", cudaGetLastError());
  rec(r, "cudaMemcpy DtoH", cudaMemcpy(&served, d_int, sizeof served, cudaMemcpyDeviceToHost));
  return served != 0;
}

}  // namespace

// ANCHOR: heap_fragmentation
// `large`: the request made among the holes.
static int heap_fragmentation(const casebook_recorder *r, size_t large) {
  rec(r, "cudaDeviceSetLimit cudaLimitMallocHeapSize", cudaDeviceSetLimit(cudaLimitMallocHeapSize, kHeap));
  void **slots;
  int *d_int;
  if (rec(r, "cudaMalloc", cudaMalloc((void **)&slots, kSlots * sizeof(void *))) != cudaSuccess) return 1;
  if (rec(r, "cudaMalloc", cudaMalloc((void **)&d_int, sizeof(int))) != cudaSuccess) return 1;
  rec(r, "cudaMemset", cudaMemset(slots, 0, kSlots * sizeof(void *)));

  // The heap is set aside at the first launch of a kernel that allocates;
  // every kernel is launched once before free memory is read, so that
  // loading their code is not counted against the allocations.
  bool large_fresh = launch_large(r, d_int, large);
  fill<<<1, 1>>>(slots, 0, kSmall);
  free_every_other<<<1, 1>>>(slots, 0);
  free_all<<<1, 1>>>(slots, 0);
  launch_count(r, slots, d_int);
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  size_t free_heap_ready = free_bytes(r);
  fact(r, names::THE_LARGE_IN_KERNEL_ALLOCATION_IS_SERVED_BY_A_FRESH_HEAP, large_fresh);

  fill<<<(kSlots + 255) / 256, 256>>>(slots, kSlots, kSmall);
  rec(r, "fill<<<>>>", cudaGetLastError());
  int live = launch_count(r, slots, d_int);
  free_every_other<<<(kSlots + 255) / 256, 256>>>(slots, kSlots);
  rec(r, "free_every_other<<<>>>", cudaGetLastError());
  int kept = launch_count(r, slots, d_int);
  size_t freed = (size_t)(live - kept) * kSmall;
  measure(r, names::SMALL_BLOCKS_ALLOCATED, live);
  measure(r, names::SMALL_BLOCKS_FREED, live - kept);
  measure(r, names::HEAP_BYTES_FREED, (double)freed);
  fact(r, names::THE_FREED_BLOCKS_ADD_UP_TO_MORE_THAN_THE_LARGE_REQUEST, freed > large);

  bool large_holes = launch_large(r, d_int, large);
  fact(r, names::THE_LARGE_IN_KERNEL_ALLOCATION_IS_SERVED_AMONG_THE_HOLES, large_holes);
  size_t free_fragmented = free_bytes(r);
  measure(r, names::CUDAMALLOC_FREE_CHANGE, (double)free_heap_ready - (double)free_fragmented);
  fact(r, names::IN_KERNEL_ALLOCATIONS_CHANGE_CUDAMEMGETINFO_S_FREE_MEMORY,
       free_fragmented + (64ull << 20) < free_heap_ready || free_heap_ready + (64ull << 20) < free_fragmented);

  // cudaMalloc's memory, with the device heap in holes. Not under the
  // sanitizer, whose other runs share the GPU: it would take their memory.
  if (!under_sanitizer(r)) {
    void *big = nullptr;
    cudaError_t err = tolerate(r, "cudaMalloc (free memory less 512 MiB)", cudaMalloc(&big, free_fragmented - kMargin));
    fact(r, names::CUDAMALLOC_SERVES_NEARLY_ALL_FREE_MEMORY_WITH_THE_DEVICE_HEAP_IN_HOLES, err == cudaSuccess);
    if (err == cudaSuccess) rec(r, "cudaFree", cudaFree(big));
  }

  free_all<<<(kSlots + 255) / 256, 256>>>(slots, kSlots);
  rec(r, "free_all<<<>>>", cudaGetLastError());
  bool large_after = launch_large(r, d_int, large);
  fact(r, names::THE_LARGE_IN_KERNEL_ALLOCATION_IS_SERVED_ONCE_THE_REST_IS_FREED, large_after);

  rec(r, "cudaFree", cudaFree(slots));
  rec(r, "cudaFree", cudaFree(d_int));
  return 0;
}

extern "C" int casebook_device_heap_exhaustion_heap_fragmentation_cpp(const casebook_recorder *r) {
  return heap_fragmentation(r, kLarge);
}
// ANCHOR_END: heap_fragmentation

// ANCHOR: hole_sized_request
// The control of the holes' claims: the same heap, filled and freed the
// same way, and the request among the holes the size of one hole.
extern "C" int casebook_device_heap_exhaustion_hole_sized_request_cpp(const casebook_recorder *r) {
  return heap_fragmentation(r, kSmall);
}
// ANCHOR_END: hole_sized_request

namespace {

const int kLocalFloats = 192;  // 768 bytes of local memory a thread, within the default stack
const int kShared = 32 * 1024;  // 32 KiB of static shared memory a block

__global__ void heavy(float *out, int seed) {
  __shared__ float tile[kShared / sizeof(float)];
  volatile float local[kLocalFloats];  // kept in local memory
  local[threadIdx.x % kLocalFloats] = (float)seed;  // a few stores: the frame is what counts, not the traffic
  local[(seed * 7 + threadIdx.x) % kLocalFloats] = (float)threadIdx.x;
  tile[threadIdx.x] = local[(seed + threadIdx.x) % kLocalFloats];
  __syncthreads();
  if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = tile[seed % blockDim.x];
}

}  // namespace

// ANCHOR: grid_size
extern "C" int casebook_device_heap_exhaustion_grid_size_cpp(const casebook_recorder *r) {
  float *out;
  if (rec(r, "cudaMalloc", cudaMalloc((void **)&out, sizeof(float))) != cudaSuccess) return 1;
  size_t before = free_bytes(r);
  measure(r, names::FREE_BEFORE_FIRST_LAUNCH, (double)before);
  const int grids[] = {1, 1 << 6, 1 << 12, 1 << 18};
  int max_blocks = under_sanitizer(r) ? 1 << 6 : 1 << 18;  // reduced: every access is checked there
  size_t first = 0, last = 0;
  int launched = 0;
  bool all_ran = true;
  for (int blocks : grids) {
    if (blocks > max_blocks) break;
    Iteration it(r, "grid");
    heavy<<<blocks, 256>>>(out, blocks);
    all_ran = rec(r, "heavy<<<blocks, 256>>>", cudaGetLastError()) == cudaSuccess && all_ran;
    all_ran = rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize()) == cudaSuccess && all_ran;
    size_t now = free_bytes(r);
    point(r, names::DEVICE_BYTES_IN_USE, (double)blocks, (double)before - (double)now);
    if (launched == 0) first = now;
    last = now;
    ++launched;
  }
  fact(r, names::EVERY_LAUNCH_RAN, all_ran);
  measure(r, names::RESERVED_BY_FIRST_LAUNCH, (double)before - (double)first);
  measure(r, names::CHANGE_FROM_SMALLEST_TO_LARGEST_GRID, (double)first - (double)last);
  fact(r, names::FREE_MEMORY_FALLS_AS_THE_GRID_GROWS, first > last + (2ull << 20));
  fact(r, names::THE_FIRST_LAUNCH_RESERVED_DEVICE_MEMORY, before > first + (2ull << 20));
  rec(r, "cudaFree", cudaFree(out));
  return 0;
}
// ANCHOR_END: grid_size
