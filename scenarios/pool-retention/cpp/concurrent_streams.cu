// pool-retention, C++: seed 004's "concurrent allocations from different
// streams and then freeing those concurrently can cause significant
// fragmentation", at a size where fragmentation could matter.
//
// Eight non-blocking streams take blocks of 1 to 64 MiB from the
// stream-ordered pool, in turn, until they hold 90% of the free memory, and
// clear each. Each block is then freed on another stream than the one that
// made it (after that stream's work, by an event). One block of 90% of what
// they held is then asked for, from the pool (on stream 0) and from
// cudaMalloc: right after the frees, and again after a synchronise (and one
// more between the pool's request and cudaMalloc's, so that each finds
// every free done).

#include <cstdint>
#include <vector>

#include "casebook.h"
#include "names.h"
#include "spin.cuh"

using namespace casebook;

namespace {

const int kStreams = 8;

unsigned long long g_state = 0x2545F4914F6CDD1DULL;
unsigned long long next_random() {
  g_state ^= g_state << 13;
  g_state ^= g_state >> 7;
  g_state ^= g_state << 17;
  return g_state;
}

// One block of `bytes`, from the pool on `stream` or from cudaMalloc: whether
// it is served (and given back at once).
bool one_block(const casebook_recorder *r, bool pool, size_t bytes, cudaStream_t stream, const char *when) {
  char call[96];
  std::snprintf(call, sizeof call, "%s (90%% of what the blocks held, %s)", pool ? "cudaMallocAsync" : "cudaMalloc", when);
  void *p = nullptr;
  cudaError_t err = tolerate(r, call, pool ? cudaMallocAsync(&p, bytes, stream) : cudaMalloc(&p, bytes));
  if (err == cudaSuccess) rec(r, pool ? "cudaFreeAsync" : "cudaFree", pool ? cudaFreeAsync(p, stream) : cudaFree(p));
  cudaGetLastError();
  return err == cudaSuccess;
}

// Records an event on each stream (into `done`) and makes every stream wait
// for all of them, so that each stream's work is done before another stream
// frees its blocks.
void order_streams(const casebook_recorder *r, cudaStream_t *streams, cudaEvent_t *done) {
  for (int i = 0; i < kStreams; ++i) {
    rec(r, "cudaEventCreateWithFlags", cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
    rec(r, "cudaEventRecord", cudaEventRecord(done[i], streams[i]));
  }
  for (int i = 0; i < kStreams; ++i)
    for (int j = 0; j < kStreams; ++j) rec(r, "cudaStreamWaitEvent", cudaStreamWaitEvent(streams[i], done[j], 0));
}

}  // namespace

// ANCHOR: concurrent_streams
extern "C" int casebook_pool_retention_concurrent_streams_cpp(const casebook_recorder *r) {
  cudaStream_t streams[kStreams];
  for (int i = 0; i < kStreams; ++i)
    rec(r, "cudaStreamCreateWithFlags (non-blocking)", cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
  const size_t target = free_bytes(r) / 10 * 9;
  struct Block {
    void *p;
    int stream;
  };
  std::vector<Block> blocks;
  size_t held = 0;
  cudaError_t made = cudaSuccess;
  for (int k = 0; made == cudaSuccess; ++k) {
    size_t size = (size_t(1) << 20) * (1 + next_random() % 64);  // 1 to 64 MiB
    if (held + size > target) break;
    int s = k % kStreams;
    void *p = nullptr;
    made = cudaMallocAsync(&p, size, streams[s]);
    if (made == cudaSuccess) made = cudaMemsetAsync(p, 1, size, streams[s]);
    if (made == cudaSuccess) {
      blocks.push_back({p, s});
      held += size;
    }
  }
  rec(r, "cudaMallocAsync and cudaMemsetAsync (blocks of 1 to 64 MiB, each stream in turn)", made);
  // Every stream's work is done before another stream frees its blocks.
  cudaEvent_t done[kStreams];
  order_streams(r, streams, done);
  cudaError_t freed = cudaSuccess;
  for (const Block &b : blocks) {
    keep_first_error(freed, cudaFreeAsync(b.p, streams[(b.stream + 1) % kStreams]));
  }
  rec(r, "cudaFreeAsync (each block on another stream than the one that made it)", freed);
  const size_t ask = held / 10 * 9;
  // Right after the frees: what the system sees as free, and the request.
  size_t seen = free_bytes(r);
  measure(r, names::HELD_BY_THE_BLOCKS, (double)held);
  measure(r, names::FREE_SEEN_RIGHT_AFTER_THE_FREES, (double)seen);
  fact(r, names::THE_REQUEST_IS_WITHIN_THE_FREE_MEMORY_SEEN, ask <= seen);
  fact(r, names::THE_POOL_SERVES_IT_RIGHT_AFTER_THE_FREES, one_block(r, true, ask, streams[0], "right after the frees"));
  fact(r, names::CUDAMALLOC_SERVES_IT_RIGHT_AFTER_THE_FREES, one_block(r, false, ask, streams[0], "right after the frees"));
  // Once every free has completed.
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  fact(r, names::THE_POOL_SERVES_IT_ONCE_THE_FREES_ARE_DONE, one_block(r, true, ask, streams[0], "after a synchronise"));
  // The pool's own block, freed on stream 0, goes back at a synchronise as
  // the blocks did: without it the pool would still hold that block when
  // cudaMalloc asks for as much.
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  fact(r, names::CUDAMALLOC_SERVES_IT_ONCE_THE_FREES_ARE_DONE, one_block(r, false, ask, streams[0], "after a synchronise"));
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  for (int i = 0; i < kStreams; ++i) {
    rec(r, "cudaEventDestroy", cudaEventDestroy(done[i]));
    rec(r, "cudaStreamDestroy", cudaStreamDestroy(streams[i]));
  }
  return 0;
}
// ANCHOR_END: concurrent_streams

// The same streams with survivors: blocks of kBlock bytes, made by each
// stream in turn until they fill 4 GiB, so that neighbouring blocks belong
// to different streams; then every block but stream 0's (every eighth) is
// freed, each on another stream than the one that made it, and stream 0's
// stay live. Once every free is done (a synchronise, where the pool at its
// default release threshold gives back what it can), how much of what was
// freed is neither live nor back as free memory: held by the pool in
// chunks a survivor shares? Then the same layout made and freed on one
// stream, every eighth block surviving: do the streams matter, or the
// survivors alone? With kSurvivors false, every block is freed in both.
struct Arm {
  double freed, trapped, pool_unused;
};

// One arm: `streams_used` streams (1 or kStreams) take the blocks in turn;
// the blocks at positions k % every == 0 (stream 0's, every a multiple of
// kStreams) survive when `survivors`.
static Arm arm(const casebook_recorder *r, size_t block, size_t fill, cudaStream_t *streams, int streams_used,
               bool survivors, size_t every, cudaMemPool_t pool) {
  std::vector<void *> blocks;
  cudaError_t made = cudaSuccess;
  for (size_t k = 0; k < fill / block && made == cudaSuccess; ++k) {
    void *p = nullptr;
    made = cudaMallocAsync(&p, block, streams[k % streams_used]);
    if (made == cudaSuccess) blocks.push_back(p);
  }
  rec(r, streams_used > 1 ? "cudaMallocAsync (the blocks, each stream in turn)" : "cudaMallocAsync (the blocks, one stream)", made);
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  const size_t full = free_bytes(r);
  cudaEvent_t done[kStreams];
  order_streams(r, streams, done);
  Arm out = {0, 0, 0};
  cudaError_t freed = cudaSuccess;
  for (size_t k = 0; k < blocks.size(); ++k) {
    if (survivors && k % every == 0) continue;  // every eighth block (stream 0's), or fewer, survives
    keep_first_error(freed, cudaFreeAsync(blocks[k], streams[(k + 1) % streams_used]));
    out.freed += (double)block;
  }
  rec(r, !survivors ? "cudaFreeAsync (every block)"
         : every == kStreams ? "cudaFreeAsync (every block but every eighth)"
                             : "cudaFreeAsync (every block but the survivors)",
      freed);
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  out.trapped = out.freed - ((double)free_bytes(r) - (double)full);
  if (out.trapped < 0) out.trapped = 0;
  unsigned long long reserved = 0, used = 0;
  rec(r, "cudaMemPoolGetAttribute (ReservedMemCurrent)", cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  rec(r, "cudaMemPoolGetAttribute (UsedMemCurrent)", cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  out.pool_unused = (double)(reserved - used);
  cudaError_t rest = cudaSuccess;
  if (survivors) {
    for (size_t k = 0; k < blocks.size(); k += every) {
      keep_first_error(rest, cudaFreeAsync(blocks[k], streams[0]));
    }
    rec(r, "cudaFreeAsync (the survivors)", rest);
  }
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  rec(r, "cudaMemPoolTrimTo (0)", cudaMemPoolTrimTo(pool, 0));
  for (int i = 0; i < kStreams; ++i) rec(r, "cudaEventDestroy", cudaEventDestroy(done[i]));
  return out;
}

template <size_t kBlock, bool kSurvivors, size_t kEvery = kStreams>
static int survivors(const casebook_recorder *r) {
  // Under the sanitizer this trial shares the GPU: a smaller fill.
  const size_t kFill = under_sanitizer(r) ? (size_t(256) << 20) : (size_t(4) << 30);
  const double kOutOfUse = (double)(size_t(128) << 20);
  cudaStream_t streams[kStreams];
  for (int i = 0; i < kStreams; ++i)
    rec(r, "cudaStreamCreateWithFlags (non-blocking)", cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
  cudaMemPool_t pool;
  rec(r, "cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, 0));
  Arm many = arm(r, kBlock, kFill, streams, kStreams, kSurvivors, kEvery, pool);
  measure(r, names::BYTES_FREED_BESIDE_THE_SURVIVORS, many.freed);
  measure(r, names::BYTES_NEITHER_LIVE_NOR_FREE_AFTER_THE_FREES, many.trapped);
  measure(r, names::POOL_RESERVED_BUT_UNUSED_AFTER_THE_FREES, many.pool_unused);
  fact(r, names::AT_LEAST_128_MIB_OF_WHAT_WAS_FREED_STAYS_OUT_OF_USE, many.trapped >= kOutOfUse);
  Arm one = arm(r, kBlock, kFill, streams, 1, kSurvivors, kEvery, pool);
  measure(r, names::BYTES_NEITHER_LIVE_NOR_FREE_WITH_ONE_STREAM, one.trapped);
  fact(r, names::WITH_ONE_STREAM_AT_LEAST_128_MIB_STAYS_OUT_OF_USE, one.trapped >= kOutOfUse);
  for (int i = 0; i < kStreams; ++i) rec(r, "cudaStreamDestroy", cudaStreamDestroy(streams[i]));
  return 0;
}

// ANCHOR: survivors
// survivors-cpp: blocks of 64 KiB, below the driver's 2 MiB page, every
// eighth surviving.
extern "C" int casebook_pool_retention_survivors_cpp(const casebook_recorder *r) {
  return survivors<size_t(64) << 10, true>(r);
}
// ANCHOR_END: survivors

// ANCHOR: page_survivors
// page-survivors-cpp: blocks of 2 MiB, one page each.
extern "C" int casebook_pool_retention_page_survivors_cpp(const casebook_recorder *r) {
  return survivors<size_t(2) << 20, true>(r);
}
// ANCHOR_END: page_survivors

// ANCHOR: sparse_survivors
// sparse-survivors-cpp: survivors-cpp with one block in 1,024 surviving
// (one 64 KiB block in each 64 MiB), still stream 0's.
extern "C" int casebook_pool_retention_sparse_survivors_cpp(const casebook_recorder *r) {
  return survivors<size_t(64) << 10, true, 1024>(r);
}
// ANCHOR_END: sparse_survivors

// ANCHOR: survivors_all_freed
// survivors-all-freed-cpp, the control: survivors-cpp with every block
// freed, the eighth ones too.
extern "C" int casebook_pool_retention_survivors_all_freed_cpp(const casebook_recorder *r) {
  return survivors<size_t(64) << 10, false>(r);
}
// ANCHOR_END: survivors_all_freed

// ANCHOR: busy_streams
// The sentence read while the frees are still queued: eight streams, each
// kept busy by a kernel that spins for two seconds, each take a block of
// 512 MiB from the pool and free it, on the stream that made it, behind
// that kernel. Before any synchronise, another stream asks the pool for one
// block of 90% of the 4 GiB freed; a ballast leaves 256 MiB free beside the
// pool, so only the freed blocks can serve it. The same request is asked
// again after a synchronise, once every free is done. The control
// (`OneStream`) makes and frees the same eight blocks on one busy stream.
static __global__ void busy(unsigned long long ns) { casebook_spin_ns(ns); }

template <bool OneStream>
static int busy_streams(const casebook_recorder *r) {
  if (under_sanitizer(r)) return 0;  // it fills the GPU this trial shares under the sanitizer
  const size_t block = size_t(512) << 20, freed = block * kStreams, beside = size_t(256) << 20;
  cudaMemPool_t pool;
  rec(r, "cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, 0));
  void *ballast = nullptr;
  if (rec(r, "cudaMalloc (ballast: all but 4 GiB and 256 MiB)",
          cudaMalloc(&ballast, free_bytes(r) - freed - beside)) != cudaSuccess)
    return 0;
  cudaStream_t streams[kStreams], asker;
  for (cudaStream_t &s : streams) rec(r, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  rec(r, "cudaStreamCreateWithFlags (the asking stream)", cudaStreamCreateWithFlags(&asker, cudaStreamNonBlocking));
  const int used = OneStream ? 1 : kStreams;
  for (int i = 0; i < used; ++i) busy<<<1, 1, 0, streams[i]>>>(2000000000ull);
  rec(r, OneStream ? "busy<<<1, 1, 0, stream 0>>> (2 s)" : "busy<<<1, 1, 0, stream i>>> (2 s, each stream)", cudaGetLastError());
  void *blocks[kStreams];
  cudaError_t made = cudaSuccess, gone = cudaSuccess;
  for (int i = 0; i < kStreams; ++i) keep_first_error(made, cudaMallocAsync(&blocks[i], block, streams[OneStream ? 0 : i]));
  for (int i = 0; i < kStreams; ++i) keep_first_error(gone, cudaFreeAsync(blocks[i], streams[OneStream ? 0 : i]));
  rec(r, OneStream ? "cudaMallocAsync (8 x 512 MiB, stream 0)" : "cudaMallocAsync (512 MiB, each stream)", made);
  rec(r, OneStream ? "cudaFreeAsync (the 8 blocks, stream 0)" : "cudaFreeAsync (each block, on its stream)", gone);
  // ANCHOR_END: busy_streams
  bool pending = true;
  for (int i = 0; i < used; ++i) pending = pending && cudaStreamQuery(streams[i]) == cudaErrorNotReady;
  cudaGetLastError();
  fact(r, names::THE_FREES_ARE_STILL_QUEUED_WHEN_IT_IS_ASKED, pending);
  measure(r, names::FREE_BESIDE_THE_POOL, (double)free_bytes(r));
  const size_t ask = freed / 10 * 9;
  fact(r, names::SERVED_WHILE_THE_FREES_ARE_QUEUED, one_block(r, true, ask, asker, "while the frees are queued"));
  // Whether the pool made the asking stream wait for the frees it served
  // the request from (cudaErrorNotReady: its work is queued behind them).
  cudaError_t waits = cudaStreamQuery(asker);
  cudaGetLastError();
  fact_text(r, names::THE_ASKING_STREAM_AFTER_THE_REQUEST, cudaGetErrorName(waits));
  uint64_t reserved = 0;
  rec(r, "cudaMemPoolGetAttribute (ReservedMemCurrent)", cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  measure(r, names::POOL_RESERVED_WHILE_THE_FREES_ARE_QUEUED, (double)reserved);
  // One piece: a block the size of one that was freed, still before any
  // synchronise.
  void *piece = nullptr;
  cudaError_t one = tolerate(r, "cudaMallocAsync (512 MiB, while the frees are queued)", cudaMallocAsync(&piece, block, asker));
  if (one == cudaSuccess) rec(r, "cudaFreeAsync", cudaFreeAsync(piece, asker));
  cudaGetLastError();
  fact(r, names::ONE_PIECE_IS_SERVED_WHILE_THE_FREES_ARE_QUEUED, one == cudaSuccess);
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  fact(r, names::SERVED_ONCE_THE_FREES_ARE_DONE, one_block(r, true, ask, asker, "after a synchronise"));
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  rec(r, "cudaMemPoolTrimTo (0)", cudaMemPoolTrimTo(pool, 0));
  for (cudaStream_t s : streams) rec(r, "cudaStreamDestroy", cudaStreamDestroy(s));
  rec(r, "cudaStreamDestroy (the asking stream)", cudaStreamDestroy(asker));
  rec(r, "cudaFree (ballast)", cudaFree(ballast));
  return 0;
}

extern "C" int casebook_pool_retention_busy_streams_cpp(const casebook_recorder *r) {
  return busy_streams<false>(r);
}

// ANCHOR: busy_one_stream
// The control: the same eight blocks, made and freed on one busy stream.
extern "C" int casebook_pool_retention_busy_one_stream_cpp(const casebook_recorder *r) {
  return busy_streams<true>(r);
}
// ANCHOR_END: busy_one_stream
