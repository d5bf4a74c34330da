// fragmentation, C++: seed 004, example 1, and the claim behind it.
//
// as-written: the article's sequence of cudaMalloc/cudaFree of varying sizes,
// then its "large" allocation of 32 MiB.
// hard-form: the harshest test of the claim for cudaMalloc itself. Fill the
// GPU with 2 MiB blocks (the driver's page), free every other one, and ask
// for one block of 90% of the memory that is now free, all of it in
// scattered 2 MiB holes.
// sub-page-holes / page-holes: the same below the page and at it. Blocks of
// 64 KiB (or 2 MiB) fill a 4 GiB stretch, every other one is freed, and one
// block of 90% of the bytes freed is asked for.

#include <algorithm>
#include <iostream>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

#include "casebook.h"
#include "names.h"

using namespace casebook;

static const casebook_recorder *g_rec = nullptr;

namespace {  // the article's names, kept to this file

// ANCHOR: as_written
void allocate_and_free(size_t size) {
  float* device_ptr;
  cudaError_t err = rec(g_rec, "cudaMalloc", cudaMalloc(&device_ptr, size * sizeof(float)));
  if (err != cudaSuccess) {
    std::cerr << "cudaMalloc failed: " << cudaGetErrorString(err) << std::endl;
    return;
  }

  err = rec(g_rec, "cudaMemset", cudaMemset(device_ptr, 0, size * sizeof(float)));
    if (err != cudaSuccess) {
        std::cerr << "cudaMemset failed: " << cudaGetErrorString(err) << std::endl;
        cudaFree(device_ptr);
        return;
  }

  rec(g_rec, "cudaFree", cudaFree(device_ptr));
}

int article_main() {
  // Repeatedly allocate and free different sized chunks
  allocate_and_free(1024);
  allocate_and_free(2048);
  allocate_and_free(1536);
  allocate_and_free(4096);
  allocate_and_free(512);
  allocate_and_free(2048);
  allocate_and_free(1024);

  //Attempt to allocate a large array
  float *large_ptr;
  cudaError_t err = rec(g_rec, "cudaMalloc (large)", cudaMalloc(&large_ptr, 8 * 1024 * 1024 * sizeof(float)));
   if(err != cudaSuccess) {
      std::cerr << "Large allocation failed, despite apparent free space. Error: " << cudaGetErrorString(err) << std::endl;
      return 1;
   }
    rec(g_rec, "cudaFree (large)", cudaFree(large_ptr));

  return 0;
}
// ANCHOR_END: as_written

}  // namespace

// The article's program, on the whole GPU (`left` 0) or beside a ballast
// that leaves `left` bytes free.
static int as_written(const casebook_recorder *r, size_t left) {
  g_rec = r;
  void *ballast = nullptr;
  if (left > 0) {
    size_t free = free_bytes(r);
    if (free <= left) return 1;
    if (rec(r, "cudaMalloc (ballast)", cudaMalloc(&ballast, free - left)) != cudaSuccess) return 1;
  }
  size_t before = free_bytes(r);
  int code = article_main();
  size_t after = free_bytes(r);
  fact(r, names::THE_LARGE_ALLOCATION_SUCCEEDS, code == 0);
  fact(r, names::FREE_MEMORY_AFTER_EQUALS_FREE_MEMORY_BEFORE, before == after);
  measure(r, names::FREE_BEFORE, (double)before);
  measure(r, names::FREE_AFTER, (double)after);
  if (ballast) rec(r, "cudaFree (ballast)", cudaFree(ballast));
  return 0;
}

extern "C" int casebook_fragmentation_as_written_cpp(const casebook_recorder *r) {
  return as_written(r, 0);
}

// ANCHOR: nearly_full
// Where "might fail" could: the article's program on a GPU nearly full, a
// ballast leaving 64 MiB, twice its 32 MiB request.
extern "C" int casebook_fragmentation_nearly_full_cpp(const casebook_recorder *r) {
  return as_written(r, size_t(64) << 20);
}
// ANCHOR_END: nearly_full

static const size_t kBlock = size_t(2) << 20;

// ANCHOR: hard_form
extern "C" int casebook_fragmentation_hard_form_cpp(const casebook_recorder *r) {
  // Under the sanitizer, a ballast leaves 2 GiB to fill: each cudaMalloc is
  // tracked there, and 40,000 of them would take minutes.
  void *ballast = nullptr;
  if (under_sanitizer(r)) {
    size_t free = free_bytes(r);
    rec(r, "cudaMalloc (ballast)", cudaMalloc(&ballast, (free - (size_t(2) << 30)) / kBlock * kBlock));
  }
  std::vector<void *> blocks;
  cudaError_t refused;
  for (;;) {  // fill the GPU with 2 MiB blocks until cudaMalloc refuses
    void *p;
    refused = cudaMalloc(&p, kBlock);
    if (refused != cudaSuccess) break;
    blocks.push_back(p);
  }
  // The refusal that ends the fill is provoked; any other error is not.
  if (refused == cudaErrorMemoryAllocation) {
    tolerate(r, "cudaMalloc (2 MiB blocks until the GPU is full)", refused);
  } else {
    rec(r, "cudaMalloc (2 MiB blocks until the GPU is full)", refused);
  }
  cudaGetLastError();  // the refusal is not sticky; clear it
  size_t full = free_bytes(r);
  cudaError_t freed = cudaSuccess;
  for (size_t i = 0; i < blocks.size(); i += 2) {  // every other one
    keep_first_error(freed, cudaFree(blocks[i]));
  }
  rec(r, "cudaFree (every other block)", freed);
  size_t scattered = free_bytes(r);
  size_t request = (scattered - full) / 10 * 9 / kBlock * kBlock;  // 90% of the holes
  void *large = nullptr;
  cudaError_t err = rec(r, "cudaMalloc (90% of the scattered free memory)", cudaMalloc(&large, request));
  // ANCHOR_END: hard_form
  size_t largest = err == cudaSuccess ? request : 0;
  if (err != cudaSuccess) {  // find what it does serve
    cudaGetLastError();
    for (size_t ask = request / 2 / kBlock * kBlock; ask >= kBlock; ask = ask / 2 / kBlock * kBlock) {
      void *p;
      if (cudaMalloc(&p, ask) == cudaSuccess) {
        cudaFree(p);
        largest = ask;
        break;
      }
      cudaGetLastError();
    }
  }
  measure(r, names::BLOCKS_FILLED, (double)blocks.size());
  measure(r, names::FREE_BYTES_SCATTERED, (double)(scattered - full));
  measure(r, names::LARGEST_REQUEST_SERVED, (double)largest);
  // What the system still reports free once cudaMalloc refuses a 2 MiB
  // block: free memory, as cudaMemGetInfo reports it, that no request gets
  // (a raw figure first; what it decides waits for its readings).
  measure(r, names::FREE_BYTES_WHEN_A_2_MIB_BLOCK_IS_REFUSED, (double)full);
  fact(r, names::ONE_BLOCK_OF_90_OF_THE_SCATTERED_FREE_MEMORY_IS_SERVED, err == cudaSuccess);
  cudaError_t rest = large ? cudaFree(large) : cudaSuccess;
  for (size_t i = 1; i < blocks.size(); i += 2) {
    keep_first_error(rest, cudaFree(blocks[i]));
  }
  if (ballast) {
    keep_first_error(rest, cudaFree(ballast));
  }
  rec(r, "cudaFree (the rest)", rest);
  return 0;
}

// A small generator of its own, so that the sizes and the order are the same
// on every machine.
static unsigned long long g_state = 0x9E3779B97F4A7C15ULL;
static unsigned long long next_random() {
  g_state ^= g_state << 13;
  g_state ^= g_state >> 7;
  g_state ^= g_state << 17;
  return g_state;
}

// One block of `share` of the free memory now, from cudaMalloc: whether it
// is served (and freed at once).
static bool one_block(const casebook_recorder *r, const char *call, double share) {
  size_t ask = (size_t)((double)free_bytes(r) * share) / kBlock * kBlock;
  void *p = nullptr;
  cudaError_t err = tolerate(r, call, cudaMalloc(&p, ask));
  if (err == cudaSuccess) rec(r, "cudaFree", cudaFree(p));
  cudaGetLastError();
  return err == cudaSuccess;
}

// The allocator the churns use: cudaMalloc and cudaFree, or, where g_pool
// is set, the stream-ordered cudaMallocAsync and cudaFreeAsync on the
// default stream, from the device's default pool (which gives back what no
// block uses at each synchronisation: its release threshold is 0).
static bool g_pool = false;

static cudaError_t churn_alloc(void **p, size_t size) {
  return g_pool ? cudaMallocAsync(p, size, 0) : cudaMalloc(p, size);
}

static cudaError_t churn_free(void *p) { return g_pool ? cudaFreeAsync(p, 0) : cudaFree(p); }

// The free memory, once the pool (where the churns use it) has given back
// what it keeps.
static size_t churn_free_bytes(const casebook_recorder *r) {
  if (g_pool) rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(0));
  return free_bytes(r);
}

// One churn: `rounds` cudaMalloc and cudaFree of sizes from kMin to kMax in
// a random order, with up to half the free memory live at a time (with
// `vary` false, every block is kMin). The blocks still live stay where the
// churn left them, in `live`.
struct Churned {
  std::vector<std::pair<void *, size_t>> live;
  size_t held = 0;
  int allocations = 0;
  cudaError_t first_error = cudaSuccess;
};

static Churned churn_rounds(size_t kMin, size_t kMax, bool vary, int rounds, size_t budget) {
  const size_t kPage = size_t(2) << 20;
  int shifts = 0;  // kMin << shifts reaches kMax
  while ((kMin << shifts) < kMax) ++shifts;
  Churned c;
  for (int round = 0; round < rounds; ++round) {
    bool release = !c.live.empty() && (next_random() % 2 == 0 || c.held > budget);
    if (release) {
      size_t k = next_random() % c.live.size();
      keep_first_error(c.first_error, churn_free(c.live[k].first));
      c.held -= c.live[k].second;
      c.live[k] = c.live.back();
      c.live.pop_back();
    } else {
      size_t size = kMin;
      if (vary) {
        size = kMin << (next_random() % (shifts + 1));  // kMin to kMax
        size += (next_random() % 8) * (size / 8);       // and between the powers of two
        if (size > kMax) size = kMax;
      }
      if (kMin >= kPage) size = (size + kPage - 1) / kPage * kPage;  // whole pages only
      void *p = nullptr;
      cudaError_t e = churn_alloc(&p, size);
      if (e != cudaSuccess) {
        keep_first_error(c.first_error, e);
        break;
      }
      c.live.push_back({p, size});
      c.held += size;
      ++c.allocations;
    }
  }
  return c;
}

// What the driver's 2 MiB pages add to the live blocks of 2 MiB or more
// (each rounded up to whole pages): padding inside live blocks, not gaps
// between them.
static double page_padding(const Churned &c) {
  const size_t kPage = size_t(2) << 20;
  double padding = 0;
  for (auto &b : c.live)
    if (b.second >= kPage) padding += (double)((b.second + kPage - 1) / kPage * kPage - b.second);
  return padding;
}

static cudaError_t free_live(Churned &c) {
  cudaError_t rest = cudaSuccess;
  for (auto &b : c.live) {
    keep_first_error(rest, churn_free(b.first));
  }
  c.live.clear();
  c.held = 0;
  return rest;
}

// What the churn's history adds: the memory its live blocks take from the
// free memory (`before` the churn, `after` it), less what the same sizes
// take when allocated once, in the same order, with no frees between. Any
// padding a size gets from the driver's pages is in both, and cancels; what
// is left is memory the churn's frees left where no block of the same sizes
// would. Frees the churn's blocks and the fresh ones.
static double excess_over_fresh(const casebook_recorder *r, size_t before, size_t after, Churned &c,
                                cudaError_t &err) {
  const double churned = (double)before - (double)after;
  std::vector<size_t> sizes;
  for (auto &b : c.live) sizes.push_back(b.second);
  keep_first_error(err, free_live(c));
  const size_t from = churn_free_bytes(r);
  Churned fresh;
  for (size_t size : sizes) {
    void *p = nullptr;
    cudaError_t e = churn_alloc(&p, size);
    keep_first_error(err, e);
    if (e != cudaSuccess) break;
    fresh.live.push_back({p, size});
  }
  const double once = (double)from - (double)churn_free_bytes(r);
  keep_first_error(err, free_live(fresh));
  return churned - once;
}

// The seeds every churn runs with: which sizes come, in which order, and
// which live block each free takes.
static const unsigned long long kSeeds[] = {
    0x9E3779B97F4A7C15ULL, 0xD1B54A32D192ED03ULL, 0x8CB92BA72F3D8DD7ULL, 0xA0761D6478BD642FULL,
    0xE7037ED1A0B428DBULL, 0x8EBC6AF09C88C6E3ULL, 0x589965CC75374CC3ULL, 0x1D8E4E27C47D124FULL,
    0xBF58476D1CE4E5B9ULL, 0x94D049BB133111EBULL};
static const int kSeedCount = 10;

static double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The churn of sizes from kMin to kMax (every block kMin where `vary` is
// false), from the memory free now, with each seed from `first` on: the
// excess over the same blocks allocated once, a reading a seed.
static std::vector<double> excess_by_seed(const casebook_recorder *r, size_t kMin, size_t kMax, bool vary,
                                          int rounds, int first, SeriesName series, cudaError_t &err) {
  std::vector<double> excess;
  for (int s = first; s < kSeedCount; ++s) {
    g_state = kSeeds[s];
    const size_t before = churn_free_bytes(r);
    Churned c = churn_rounds(kMin, kMax, vary, rounds, before / 2);
    keep_first_error(err, c.first_error);
    excess.push_back(excess_over_fresh(r, before, churn_free_bytes(r), c, err));
    point(r, series, s, excess.back());
  }
  return excess;
}

// The churn of `size` blocks alone, with every seed.
static std::vector<double> one_size_excess(const casebook_recorder *r, size_t size, int rounds, const char *call,
                                           SeriesName series) {
  cudaError_t err = cudaSuccess;
  std::vector<double> excess = excess_by_seed(r, size, size, false, rounds, 0, series, err);
  rec(r, call, err);
  return excess;
}

// "Significantly" more than the churn of one size: at least four times its
// median, and beyond the largest of its readings, so that no seed of the
// one-size churn reaches it.
static bool beyond(double varied_median, const std::vector<double> &one) {
  return varied_median > 0 && varied_median >= 4 * median_of(one) &&
         varied_median > *std::max_element(one.begin(), one.end());
}

// Seed 004's "allocations frequently created and destroyed with varying
// sizes": 100,000 rounds of the churn above, with each of ten seeds. After
// each, what its history adds: the memory its live blocks take beyond what
// the same sizes take allocated once (after the first seed's, is one block
// of 90% of the memory still free served?). Then the same churn with two
// sizes declared beforehand, each block of one size: 256 KiB, which tiles
// the driver's 2 MiB page, and 320 KiB, which does not (six fill 1,920 KiB
// of a page), each with the same ten seeds: what the sizes' variety adds,
// against each of the two.
template <size_t kMin, size_t kMax = (size_t(64) << 20), bool kVary = true>
static int churn(const casebook_recorder *r) {
  // Under the sanitizer, every cudaMalloc is tracked and this trial shares
  // the GPU: fewer rounds, one seed, no request of the free memory and no
  // churn of one size.
  const bool reduced = under_sanitizer(r);
  const int kRounds = reduced ? 2000 : 100000;
  g_state = kSeeds[0];
  const size_t before = churn_free_bytes(r);
  Churned c = churn_rounds(kMin, kMax, kVary, kRounds, before / 2);
  rec(r, "cudaMalloc and cudaFree (the churn)", c.first_error);
  measure(r, names::ALLOCATIONS_MADE, c.allocations);
  measure(r, names::BLOCKS_LIVE_AFTER_THE_CHURN, (double)c.live.size());
  measure(r, names::BYTES_LIVE_AFTER_THE_CHURN, (double)c.held);
  const size_t after = churn_free_bytes(r);
  const double trapped = (double)before - (double)after - (double)c.held;
  measure(r, names::BYTES_NEITHER_LIVE_NOR_FREE_AFTER_THE_CHURN, trapped > 0 ? trapped : 0.0);
  measure(r, names::PAGE_PADDING_OF_THE_LIVE_BLOCKS, page_padding(c));
  if (!reduced) {
    fact(r, names::ONE_BLOCK_OF_90_OF_THE_FREE_MEMORY_IS_SERVED_AFTER_THE_CHURN,
         one_block(r, "cudaMalloc (90% of the free memory, after the churn)", 0.9));
    // 90% of what the live blocks leave of the memory free before the
    // churn: memory trapped between them, reported free or not, counts
    // against it.
    size_t ask = (size_t)(((double)before - (double)c.held) * 0.9) / kBlock * kBlock;
    void *p = nullptr;
    cudaError_t err = tolerate(r, "cudaMalloc (90% of what the live blocks leave)", cudaMalloc(&p, ask));
    if (err == cudaSuccess) rec(r, "cudaFree", cudaFree(p));
    cudaGetLastError();
    fact(r, names::ONE_BLOCK_OF_90_OF_WHAT_THE_LIVE_BLOCKS_LEAVE_IS_SERVED, err == cudaSuccess);
  }
  cudaError_t again = cudaSuccess;
  std::vector<double> varied = {excess_over_fresh(r, before, after, c, again)};
  point(r, names::TRAPPED_BY_THE_CHURN, 0, varied[0]);
  rec(r, "cudaFree, and the same sizes allocated once (the churn's blocks)", again);
  if (reduced) {
    measure(r, names::BYTES_TRAPPED_BESIDE_THE_PADDING, varied[0]);
    return 0;
  }

  // The same churn with the other seeds.
  again = cudaSuccess;
  std::vector<double> more = excess_by_seed(r, kMin, kMax, kVary, kRounds, 1, names::TRAPPED_BY_THE_CHURN, again);
  varied.insert(varied.end(), more.begin(), more.end());
  rec(r, "cudaMalloc and cudaFree (the churn, nine more seeds)", again);

  // The same churn of one size, 256 KiB and 320 KiB, with each seed.
  std::vector<double> tiling = one_size_excess(r, size_t(256) << 10, kRounds,
                                               "cudaMalloc and cudaFree (the same churn, 256 KiB)",
                                               names::TRAPPED_BY_THE_CHURN_OF_256_KIB);
  std::vector<double> odd = one_size_excess(r, size_t(320) << 10, kRounds,
                                            "cudaMalloc and cudaFree (the same churn, 320 KiB)",
                                            names::TRAPPED_BY_THE_CHURN_OF_320_KIB);
  const double gaps = median_of(varied);
  measure(r, names::BYTES_TRAPPED_BESIDE_THE_PADDING, gaps);
  measure(r, names::BYTES_TRAPPED_BY_THE_SAME_CHURN_OF_ONE_SIZE, median_of(tiling));
  measure(r, names::BYTES_TRAPPED_BY_THE_SAME_CHURN_OF_320_KIB, median_of(odd));
  fact(r, names::THE_CHURN_TRAPS_FOUR_TIMES_THE_256_KIB_CHURN, beyond(gaps, tiling));
  fact(r, names::THE_CHURN_TRAPS_FOUR_TIMES_THE_320_KIB_CHURN, beyond(gaps, odd));
  return 0;
}

// ANCHOR: churn
// churn-cpp: sizes from 4 KiB, below the driver's 2 MiB page.
extern "C" int casebook_fragmentation_churn_cpp(const casebook_recorder *r) {
  return churn<size_t(4) << 10>(r);
}
// ANCHOR_END: churn

// ANCHOR: churn_pages
// churn-pages-cpp, the control: sizes from 2 MiB, in whole pages.
extern "C" int casebook_fragmentation_churn_pages_cpp(const casebook_recorder *r) {
  return churn<size_t(2) << 20>(r);
}
// ANCHOR_END: churn_pages

// ANCHOR: churn_sub_page
// churn-sub-page-cpp: every size below the driver's 2 MiB page, 4 KiB to 1 MiB.
extern "C" int casebook_fragmentation_churn_sub_page_cpp(const casebook_recorder *r) {
  return churn<size_t(4) << 10, size_t(1) << 20>(r);
}
// ANCHOR_END: churn_sub_page

// ANCHOR: churn_over_half_page
// churn-over-half-page-cpp: sizes from 1,088 KiB to 1,984 KiB, each more than
// half the driver's 2 MiB page and less than the page, so that no two share
// one.
extern "C" int casebook_fragmentation_churn_over_half_page_cpp(const casebook_recorder *r) {
  return churn<size_t(1088) << 10, size_t(1984) << 10>(r);
}
// ANCHOR_END: churn_over_half_page

// ANCHOR: churn_small
// churn-small-cpp: sizes from 4 KiB to 64 KiB, many to a page.
extern "C" int casebook_fragmentation_churn_small_cpp(const casebook_recorder *r) {
  return churn<size_t(4) << 10, size_t(64) << 10>(r);
}
// ANCHOR_END: churn_small

// The same churns from the default pool of stream-ordered allocation.
template <size_t kMin>
static int churn_from_pool(const casebook_recorder *r) {
  g_pool = true;
  return churn<kMin>(r);
}

// ANCHOR: churn_pool
// churn-pool-cpp: the churn's blocks from cudaMallocAsync, freed with cudaFreeAsync.
extern "C" int casebook_fragmentation_churn_pool_cpp(const casebook_recorder *r) {
  return churn_from_pool<size_t(4) << 10>(r);
}
// ANCHOR_END: churn_pool

// ANCHOR: churn_one_size
// churn-one-size-cpp: the same churn, every block 256 KiB.
extern "C" int casebook_fragmentation_churn_one_size_cpp(const casebook_recorder *r) {
  return churn<size_t(256) << 10, size_t(256) << 10, false>(r);
}
// ANCHOR_END: churn_one_size

// ANCHOR: random_order_free
// Seed 004's "the immediate free operations don't always lead to
// defragmentation": blocks of varying sizes fill 90% of the free memory and
// are all freed, in a random order; then one block of 90% of the free memory
// is asked for, from cudaMalloc and from the stream-ordered pool (the same
// blocks made with cudaMallocAsync and freed with cudaFreeAsync).
extern "C" int casebook_fragmentation_random_order_free_cpp(const casebook_recorder *r) {
  const bool reduced = under_sanitizer(r);
  if (reduced) return 0;  // it fills the GPU this trial shares under the sanitizer
  cudaStream_t stream;
  rec(r, "cudaStreamCreate", cudaStreamCreate(&stream));
  for (int pool = 0; pool < 2; ++pool) {
    Iteration it(r, pool ? "the stream-ordered pool" : "cudaMalloc");
    const size_t fill = free_bytes(r) / 10 * 9;
    std::vector<void *> blocks;
    size_t held = 0;
    cudaError_t err = cudaSuccess;
    while (err == cudaSuccess) {
      size_t size = (size_t(16) << 20) * (1 + next_random() % 16);  // 16 to 256 MiB
      if (held + size > fill) break;
      void *p = nullptr;
      err = pool ? cudaMallocAsync(&p, size, stream) : cudaMalloc(&p, size);
      if (err == cudaSuccess) {
        blocks.push_back(p);
        held += size;
      }
    }
    rec(r, pool ? "cudaMallocAsync (blocks of 16 to 256 MiB)" : "cudaMalloc (blocks of 16 to 256 MiB)", err);
    for (size_t i = blocks.size(); i > 1; --i) std::swap(blocks[i - 1], blocks[next_random() % i]);
    cudaError_t freed = cudaSuccess;
    for (void *p : blocks) {
      keep_first_error(freed, pool ? cudaFreeAsync(p, stream) : cudaFree(p));
    }
    rec(r, pool ? "cudaFreeAsync (every block, in a random order)" : "cudaFree (every block, in a random order)", freed);
    size_t ask = (size_t)((double)held * 0.9) / kBlock * kBlock;
    void *large = nullptr;
    cudaError_t served = pool ? tolerate(r, "cudaMallocAsync (90% of what the blocks held)", cudaMallocAsync(&large, ask, stream))
                              : tolerate(r, "cudaMalloc (90% of what the blocks held)", cudaMalloc(&large, ask));
    if (served == cudaSuccess) rec(r, pool ? "cudaFreeAsync" : "cudaFree", pool ? cudaFreeAsync(large, stream) : cudaFree(large));
    cudaGetLastError();
    rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(stream));
    fact(r, pool ? names::THE_POOL_SERVES_IT_AFTER_THE_FREES : names::CUDAMALLOC_SERVES_IT_AFTER_THE_FREES,
         served == cudaSuccess);
  }
  rec(r, "cudaStreamDestroy", cudaStreamDestroy(stream));
  return 0;
}
// ANCHOR_END: random_order_free

// ANCHOR: sub_page_holes
// sub-page-holes-cpp: holes<size_t(64) << 10>, blocks of 64 KiB.
// Blocks of `Block` bytes fill a stretch of 4 GiB (a ballast holds the rest
// of the GPU), every other one is freed, and one block of 90% of the bytes
// freed is asked for. Below the driver's 2 MiB page, blocks share pages: a
// page with one block still in it is not given back, whatever was freed
// beside it. With `Immediate`, the blocks to be freed are freed as Example 1
// frees its own: each set with cudaMemset and freed right after it is made,
// before the next block of the stretch is asked for.
template <size_t Block, size_t FreeEvery = 2, bool Immediate = false>
static int holes(const casebook_recorder *r) {
  const size_t stretch = under_sanitizer(r) ? size_t(256) << 20 : size_t(4) << 30;
  void *ballast = nullptr;
  rec(r, "cudaMalloc (ballast: all but the stretch)",
      cudaMalloc(&ballast, (free_bytes(r) - stretch) / kBlock * kBlock));
  const size_t before = Immediate ? free_bytes(r) : 0;
  std::vector<void *> blocks;
  cudaError_t err = cudaSuccess;
  cudaError_t freed = cudaSuccess;
  size_t bytes_freed = 0;
  while ((blocks.size() + 1) * Block <= stretch / 100 * 97) {
    void *p;
    err = cudaMalloc(&p, Block);
    if (err != cudaSuccess) break;
    if (Immediate && blocks.size() % FreeEvery == 0) {  // Example 1: used, then freed at once
      keep_first_error(freed, cudaMemset(p, 0, Block));
      keep_first_error(freed, cudaFree(p));
      bytes_freed += Block;
      p = nullptr;
    }
    blocks.push_back(p);
  }
  rec(r, "cudaMalloc (blocks filling the stretch)", err);
  size_t full = free_bytes(r);
  if (Immediate) {
    rec(r, "cudaMemset and cudaFree (every other block, right after it is made)", freed);
  } else {
    for (size_t i = 0; i < blocks.size(); i += FreeEvery) {  // every other one (or every one)
      keep_first_error(freed, cudaFree(blocks[i]));
      bytes_freed += Block;
    }
    rec(r, FreeEvery == 1 ? "cudaFree (every block)" : "cudaFree (every other block)", freed);
  }
  size_t rise = free_bytes(r) - full;
  size_t request = bytes_freed / 10 * 9 / kBlock * kBlock;  // 90% of the bytes freed
  void *large = nullptr;
  cudaError_t served = tolerate(r, "cudaMalloc (90% of the bytes freed)", cudaMalloc(&large, request));
  // ANCHOR_END: sub_page_holes
  cudaGetLastError();
  measure(r, names::BLOCK_BYTES, (double)Block);
  measure(r, names::BYTES_FREED, (double)bytes_freed);
  if (Immediate) {
    // Nothing is freed after the fill: what the stretch takes is read
    // against the memory free before it, and the bytes freed all show as
    // free when it takes no more than its live blocks, in whole 2 MiB pages
    // (and one page more: the last one the fill touched).
    const size_t live = (blocks.size() - (blocks.size() + FreeEvery - 1) / FreeEvery) * Block;
    const size_t takes = before - full;
    measure(r, names::BYTES_STILL_LIVE, (double)live);
    measure(r, names::STRETCH_TAKES, (double)takes);
    fact(r, names::THE_BYTES_FREED_ALL_SHOW_AS_FREE_MEMORY, takes <= (live + kBlock - 1) / kBlock * kBlock + kBlock);
  } else {
    measure(r, names::FREE_MEMORY_RISE, (double)rise);
    fact(r, names::THE_BYTES_FREED_ALL_SHOW_AS_FREE_MEMORY, rise >= bytes_freed);
  }
  fact(r, names::ONE_BLOCK_OF_90_OF_THE_BYTES_FREED_IS_SERVED, served == cudaSuccess);
  cudaError_t rest = large ? cudaFree(large) : cudaSuccess;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i % FreeEvery == 0) continue;  // freed above
    keep_first_error(rest, cudaFree(blocks[i]));
  }
  keep_first_error(rest, cudaFree(ballast));
  rec(r, "cudaFree (the rest)", rest);
  return 0;
}

extern "C" int casebook_fragmentation_sub_page_holes_cpp(const casebook_recorder *r) {
  return holes<size_t(64) << 10>(r);
}

// ANCHOR: page_holes
// The control: the same with blocks of the driver's page, 2 MiB.
extern "C" int casebook_fragmentation_page_holes_cpp(const casebook_recorder *r) {
  return holes<size_t(2) << 20>(r);
}
// ANCHOR_END: page_holes

// ANCHOR: sub_page_all_freed
// The control of "the failure to completely free GPU memory in between runs
// can lead to fragmentation": sub-page-holes, with every block freed.
extern "C" int casebook_fragmentation_sub_page_all_freed_cpp(const casebook_recorder *r) {
  return holes<size_t(64) << 10, 1>(r);
}
// ANCHOR_END: sub_page_all_freed

// ANCHOR: sub_page_immediate_free
// Seed 004's "the immediate free operations don't always lead to
// defragmentation", beside live blocks: sub-page-holes, with every other
// block freed as Example 1 frees (set, then freed right after it is made)
// instead of once the stretch is full.
extern "C" int casebook_fragmentation_sub_page_immediate_free_cpp(const casebook_recorder *r) {
  return holes<size_t(64) << 10, 2, true>(r);
}
// ANCHOR_END: sub_page_immediate_free

// ANCHOR: chunk_pool
// Seed 004's remedy: "a custom memory pool manager that allocates larger
// chunks of memory initially and then subdivides these chunks into smaller
// blocks as needed", reusing freed blocks. Chunks of 2 MiB (the driver's
// page) from cudaMalloc; a freed block goes back to its chunk and serves the
// next request of its size; chunks left empty stay in the pool for reuse
// until the driver refuses a new chunk, or a request the pool does not serve
// (a large one) comes: the pool gives them back first, as caching
// allocators do before they report out of memory. With `kBySize`, each chunk holds blocks of one size; without it,
// blocks of every size are cut from the chunks in the order they are asked
// for.
template <bool kBySize>
class ChunkPool {
 public:
  static const size_t kChunk = size_t(2) << 20;
  cudaError_t alloc(void **out, size_t bytes) {
    std::vector<char *> &freed = freed_[bytes];
    if (!freed.empty()) {  // a block freed earlier, of this size: reused
      *out = freed.back();
      freed.pop_back();
      ++reused;
      return hand_out(*out, bytes);
    }
    Open &open = open_[kBySize ? bytes : 0];  // the chunk being cut: one per size, or one for all
    if (open.base == nullptr || open.used + bytes > kChunk) {
      char *base = nullptr;
      cudaError_t err = cudaMalloc(&base, kChunk);
      if (err != cudaSuccess) {  // out of memory: give back the empty chunks, and ask once more
        cudaGetLastError();
        trim();
        err = cudaMalloc(&base, kChunk);
      }
      if (err != cudaSuccess) return err;
      live_[base] = 0;
      open = Open{base, 0};
    }
    *out = open.base + open.used;
    open.used += bytes;
    return hand_out(*out, bytes);
  }
  void free(void *p) {
    char *block = (char *)p;
    freed_[sizes_[block]].push_back(block);
    --chunk_of(block)->second;
  }
  // Gives the chunks with no live block back to the driver.
  cudaError_t trim() {
    for (auto &f : freed_)
      f.second.erase(std::remove_if(f.second.begin(), f.second.end(),
                                    [&](char *b) { return chunk_of(b)->second == 0; }),
                     f.second.end());
    for (auto &o : open_)
      if (o.second.base != nullptr && live_[o.second.base] == 0) o.second = Open{};
    cudaError_t first = cudaSuccess;
    for (auto it = live_.begin(); it != live_.end();) {
      if (it->second != 0) {
        ++it;
        continue;
      }
      keep_first_error(first, cudaFree(it->first));
      it = live_.erase(it);
    }
    return first;
  }
  cudaError_t release() {
    cudaError_t first = cudaSuccess;
    for (auto &c : live_) {
      keep_first_error(first, cudaFree(c.first));
    }
    live_.clear();
    return first;
  }
  size_t chunks() const { return live_.size(); }
  size_t reused = 0;

 private:
  struct Open {
    char *base = nullptr;
    size_t used = 0;  // cut so far, from the start
  };
  std::map<char *, int>::iterator chunk_of(char *block) { return std::prev(live_.upper_bound(block)); }
  cudaError_t hand_out(void *p, size_t bytes) {
    sizes_[(char *)p] = bytes;
    ++chunk_of((char *)p)->second;
    return cudaSuccess;
  }
  std::map<char *, int> live_;  // each chunk: its live blocks
  std::map<size_t, Open> open_;
  std::map<size_t, std::vector<char *>> freed_;  // freed blocks, by size
  std::map<char *, size_t> sizes_;
};

// The workload where cudaMalloc itself fragments: kept blocks of 64 KiB and
// temporaries of 256 KiB, both below the driver's page, asked for in turn
// in a stretch of 4 GiB (a ballast holds the rest of the GPU); the round's
// temporaries are freed at its end; four rounds. Then one block of 90% of
// what the kept blocks leave of the stretch, from cudaMalloc. Once without a
// pool, then through the pool, which gives back its empty chunks first.
template <bool kBySize>
static int chunk_pool(const casebook_recorder *r) {
  const size_t kKept = size_t(64) << 10, kTemporary = size_t(256) << 10;
  const size_t stretch = under_sanitizer(r) ? size_t(256) << 20 : size_t(4) << 30;
  void *ballast = nullptr;
  rec(r, "cudaMalloc (ballast: all but the stretch)",
      cudaMalloc(&ballast, (free_bytes(r) - stretch) / kBlock * kBlock));
  for (int pooled = 0; pooled < 2; ++pooled) {
    Iteration it(r, pooled ? "through the pool" : "without a pool");
    ChunkPool<kBySize> pool;
    auto get = [&](void **p, size_t bytes) { return pooled ? pool.alloc(p, bytes) : cudaMalloc(p, bytes); };
    auto put = [&](void *p) {
      if (pooled) pool.free(p);
      else cudaFree(p);
    };
    std::vector<void *> kept;
    cudaError_t err = cudaSuccess;
    int rounds = 0;
    for (; rounds < 4 && err == cudaSuccess; ++rounds) {
      std::vector<void *> temporaries;
      // Until the kept blocks and this round's temporaries fill 90% of the
      // stretch, or an allocation is refused. A pool that cuts both sizes
      // from the same chunks packs six pairs in a chunk (93.75%), so 90%
      // fits it in the first round: what it refuses later, it refuses for
      // the pieces its freed blocks leave, not for want of room.
      while (err == cudaSuccess && (kept.size() + 1) * kKept + (temporaries.size() + 1) * kTemporary <= stretch / 100 * 90) {
        void *k = nullptr, *t = nullptr;
        err = get(&k, kKept);
        if (err != cudaSuccess) break;
        kept.push_back(k);
        err = get(&t, kTemporary);
        if (err != cudaSuccess) break;
        temporaries.push_back(t);
      }
      for (void *t : temporaries) put(t);
    }
    cudaGetLastError();
    // Rounds whose filling ended at the 90% mark, not on a refusal.
    measure(r, pooled ? names::ROUNDS_COMPLETED_THROUGH_THE_POOL : names::ROUNDS_COMPLETED_WITHOUT_A_POOL,
            rounds - (err != cudaSuccess ? 1 : 0));
    fact(r, pooled ? names::EVERY_BLOCK_IS_SERVED_THROUGH_THE_POOL : names::EVERY_BLOCK_IS_SERVED_WITHOUT_A_POOL,
         err == cudaSuccess);
    rec(r, pooled ? "the pool (kept blocks and temporaries, four rounds)" : "cudaMalloc and cudaFree (kept blocks and temporaries, four rounds)",
        err == cudaErrorMemoryAllocation ? cudaSuccess : err);  // a refusal ends the filling early
    if (pooled) {
      rec(r, "cudaFree (the pool's empty chunks)", pool.trim());
      measure(r, names::CHUNKS_THE_POOL_HOLDS_FOR_THE_KEPT_BLOCKS, (double)pool.chunks());
      measure(r, names::BLOCKS_THE_POOL_REUSED, (double)pool.reused);
    }
    const double kept_bytes = (double)kept.size() * kKept;
    measure(r, pooled ? names::BYTES_KEPT_THROUGH_THE_POOL : names::BYTES_KEPT_WITHOUT_A_POOL, kept_bytes);
    size_t ask = (size_t)(((double)stretch - kept_bytes) * 0.9) / kBlock * kBlock;
    void *large = nullptr;
    cudaError_t served = tolerate(r, "cudaMalloc (90% of what the kept blocks leave of the stretch)", cudaMalloc(&large, ask));
    cudaGetLastError();
    fact(r, pooled ? names::THE_REQUEST_IS_SERVED_BESIDE_THE_POOL : names::THE_REQUEST_IS_SERVED_WITHOUT_A_POOL,
         served == cudaSuccess);
    if (served == cudaSuccess) rec(r, "cudaFree (the large block)", cudaFree(large));
    if (pooled) {
      rec(r, "cudaFree (the pool's chunks)", pool.release());
    } else {
      cudaError_t rest = cudaSuccess;
      for (void *k : kept) {
        keep_first_error(rest, cudaFree(k));
      }
      rec(r, "cudaFree (the kept blocks)", rest);
    }
  }
  rec(r, "cudaFree (the ballast)", cudaFree(ballast));
  return 0;
}
// ANCHOR_END: chunk_pool

// ANCHOR: size_class_pool
// size-class-pool-cpp: each chunk holds blocks of one size.
extern "C" int casebook_fragmentation_size_class_pool_cpp(const casebook_recorder *r) {
  return chunk_pool<true>(r);
}
// ANCHOR_END: size_class_pool

// ANCHOR: shared_chunk_pool
// shared-chunk-pool-cpp, the control: blocks of every size cut from the same chunks.
extern "C" int casebook_fragmentation_shared_chunk_pool_cpp(const casebook_recorder *r) {
  return chunk_pool<false>(r);
}
// ANCHOR_END: shared_chunk_pool
