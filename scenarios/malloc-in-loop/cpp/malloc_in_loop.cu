// malloc-in-loop, C++: seed 004's mitigation, "pre-allocating and reusing
// buffers, or using a memory pool allocator".
//
// One step of the hot loop needs four temporaries of 4 MiB and runs four
// small kernels on them. broken allocates and frees the temporaries inside
// the loop; cudaFree waits for the device, so the host can never run ahead.
// fixed allocates them once; pool takes them from the stream-ordered pool.
// All three compute the same result, checked against the CPU. The fixed
// forms time the broken loop in the same process, in interleaved pairs, and
// the recorder's compare_pairs (the Rust rule every timing fact uses)
// decides whether the speed-up clears the floor.

#include <algorithm>
#include <chrono>
#include <vector>

#include "casebook.h"
#include "names.h"

using namespace casebook;

static const int kN = 1 << 20;  // floats per temporary: 4 MiB
static const int kTemps = 4;
// Steps per timed loop; the reduced form for the sanitizer, where timings
// mean nothing, runs a few for the result alone.
static int kSteps = 200;
static const int kSanitizerSteps = 8;
static const double kFloor = 10.0;
// Pairs of timed loops, this form's then the broken one's, so that a load
// that comes and goes stretches both loops of a pair alike.
static const int kRounds = 5;
// The least the broken loop must take longer, in seconds, for the speed-up
// to count: the loops take milliseconds, their timers microseconds.
static const double kLeast = 0.01;
static const long long kSpinNs = 50 * 1000 * 1000;

static __global__ void first(const float *in, float *t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) t[i] = in[i] * 2.0f;
}

static __global__ void next(const float *a, float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i];
}

static __global__ void accumulate(float *out, const float *t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += t[i];
}

static __global__ void spin(long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < (unsigned long long)ns);
}

static void step(const float *in, float **t, float *out) {
  const int threads = 256, blocks = (kN + threads - 1) / threads;
  first<<<blocks, threads>>>(in, t[0], kN);
  for (int k = 1; k < kTemps; ++k) next<<<blocks, threads>>>(t[k - 1], t[k], kN);
  accumulate<<<blocks, threads>>>(out, t[kTemps - 1], kN);
}

struct Temps {
  float *t[kTemps];
};

// ANCHOR: broken
static void step_broken(const float *in, float *out, Temps &) {
  float *t[kTemps];
  for (int k = 0; k < kTemps; ++k) cudaMalloc(&t[k], kN * sizeof(float));
  step(in, t, out);
  for (int k = 0; k < kTemps; ++k) cudaFree(t[k]);  // BUG: waits for the device
}
// ANCHOR_END: broken

// ANCHOR: fixed
// `kept` was allocated once, before the loop, and is freed after it.
static void step_fixed(const float *in, float *out, Temps &kept) {
  step(in, kept.t, out);  // FIX: the same temporaries, every step
}
// ANCHOR_END: fixed

// ANCHOR: pool
// The pool's release threshold is raised for the loop (see
// casebook_malloc_in_loop_pool_cpp below), so memory freed in one step is
// there for the next without being mapped again.
template <bool Synced, bool EmptiedEachStep>
static void step_pool(const float *in, float *out, Temps &) {
  float *t[kTemps];
  for (int k = 0; k < kTemps; ++k) cudaMallocAsync(&t[k], kN * sizeof(float), 0);  // FIX: pool
  step(in, t, out);
  for (int k = 0; k < kTemps; ++k) cudaFreeAsync(t[k], 0);  // back to the pool, no wait
  if (Synced) cudaStreamSynchronize(0);  // the controls: the host waits for each step
  if (EmptiedEachStep) {  // pool-emptied-cpp: nothing cached for the next step
    cudaMemPool_t pool;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    cudaMemPoolTrimTo(pool, 0);
  }
}
// ANCHOR_END: pool

typedef void (*Step)(const float *, float *, Temps &);

struct Buffers {
  float *in = nullptr, *out = nullptr;
  Temps kept;
  std::vector<float> host;
};

static void loop(Step one, Buffers &b, int steps) {
  for (int s = 0; s < steps; ++s) one(b.in, b.out, b.kept);
}

static bool setup(const casebook_recorder *r, Buffers &b) {
  b.host.resize(kN);
  for (int i = 0; i < kN; ++i) b.host[i] = (float)(i % 100);
  if (rec(r, "cudaMalloc (input)", cudaMalloc(&b.in, kN * sizeof(float))) != cudaSuccess) return false;
  if (rec(r, "cudaMalloc (output)", cudaMalloc(&b.out, kN * sizeof(float))) != cudaSuccess) return false;
  for (int k = 0; k < kTemps; ++k) {
    if (rec(r, "cudaMalloc (kept temporary)", cudaMalloc(&b.kept.t[k], kN * sizeof(float))) != cudaSuccess) return false;
  }
  rec(r, "cudaMemcpy HtoD (input)", cudaMemcpy(b.in, b.host.data(), kN * sizeof(float), cudaMemcpyHostToDevice));
  return true;
}

// Runs `one` for kSteps from a zeroed output; returns its wall time, and
// clears `right` if the output differs from the CPU's.
static double timed(const casebook_recorder *r, const char *label, Step one, Buffers &b, bool &right) {
  rec(r, "cudaMemset (output)", cudaMemset(b.out, 0, kN * sizeof(float)));
  loop(one, b, 2);  // warm up: module load, first allocations
  rec(r, "cudaMemset (output)", cudaMemset(b.out, 0, kN * sizeof(float)));
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  auto start = std::chrono::steady_clock::now();
  loop(one, b, kSteps);
  rec(r, label, cudaGetLastError());
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<float> out(kN);
  rec(r, "cudaMemcpy DtoH (output)", cudaMemcpy(out.data(), b.out, kN * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i) right &= out[i] == b.host[i] * 2.0f * kSteps;
  return seconds;
}

// Whether one step of `loop` blocks the host while the device is busy: a
// 50 ms kernel runs first, and the step must return long before it ends.
static bool waits_for_device(const casebook_recorder *r, Step one, Buffers &b) {
  spin<<<1, 1>>>(kSpinNs);
  rec(r, "spin<<<1, 1>>> (50 ms)", cudaGetLastError());
  auto start = std::chrono::steady_clock::now();
  one(b.in, b.out, b.kept);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  measure(r, names::ONE_STEP_BEHIND_A_50MS_KERNEL, seconds);
  return seconds * 1e9 > kSpinNs / 2;
}

// How much faster than its baseline pool loop a pool loop must be, and by
// how many seconds at the least, for keeping the pool to count.
static const double kVersusFloor = 1.5;
static const double kVersusLeast = 0.005;

// `one` against `versus`, another pool loop, in interleaved pairs: whether
// `one` is kVersusFloor times faster.
static void against(const casebook_recorder *r, Step one, Step versus, Buffers &b, bool &right) {
  double mine[kRounds] = {}, theirs[kRounds] = {};
  for (int round = 0; round < kRounds; ++round) {
    Iteration it(r, "timing round, against the baseline pool loop");
    mine[round] = timed(r, "the hot loop", one, b, right);
    theirs[round] = timed(r, "the baseline pool loop", versus, b, right);
  }
  double speedup = 0;
  bool clears = compare_pairs(r, theirs, mine, kRounds, kVersusLeast, kVersusFloor, &speedup) == Larger::A;
  measure(r, names::SPEEDUP_OVER_THE_BASELINE_POOL_LOOP, speedup);
  fact(r, names::THE_LOOP_CLEARS_1_5X_OVER_THE_BASELINE_POOL_LOOP, clears);
}

static int run(const casebook_recorder *r, Step one, bool compare, Step versus = nullptr) {
  Buffers b;
  if (!setup(r, b)) return 1;
  // Under the sanitizer every launch is checked and timings mean nothing:
  // the loop runs for its result only.
  const bool timings = !under_sanitizer(r);
  if (!timings) kSteps = kSanitizerSteps;
  compare &= timings;
  if (timings) {
    loop(one, b, 1);  // warm up: module load, first allocations
    rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
    bool waits = waits_for_device(r, one, b);
    fact(r, names::ONE_STEP_WAITS_FOR_THE_DEVICE, waits);
    check(r, names::WAITS, !waits);
  }
  // Rounds, each loop timed in turn: the speed-up is read from the pairs
  // (the median of broken / mine, clear in four pairs of five), the loops'
  // times are the fastest of each, so a clock still ramping up in the first
  // round counts in neither.
  const int rounds = compare ? kRounds : 1;
  double mine_times[kRounds] = {}, broken_times[kRounds] = {};
  double mine = 1e30, broken = 1e30;
  bool right = true;
  for (int round = 0; round < rounds; ++round) {
    Iteration it(r, "timing round");
    mine_times[round] = timed(r, "the hot loop", one, b, right);
    mine = std::min(mine, mine_times[round]);
    if (compare) {
      broken_times[round] = timed(r, "the hot loop, broken form (baseline)", step_broken, b, right);
      broken = std::min(broken, broken_times[round]);
    }
  }
  if (versus != nullptr && timings) against(r, one, versus, b, right);
  check(r, names::OUTPUT_EQUALS_THE_CPU_S, right);
  measure(r, names::LOOP_SECONDS, mine);
  measure(r, names::SECONDS_PER_STEP_SECONDS, mine / kSteps);
  if (compare) {
    double speedup = 0;
    bool clears = compare_pairs(r, broken_times, mine_times, rounds, kLeast, kFloor, &speedup) == Larger::A;
    measure(r, names::BROKEN_LOOP_SECONDS, broken);
    measure(r, names::SPEEDUP_OVER_BROKEN, speedup);
    fact(r, names::SPEED_UP_OVER_THE_BROKEN_LOOP_CLEARS_10X, clears);
    check(r, names::FLOOR, clears);
  }
  for (int k = 0; k < kTemps; ++k) rec(r, "cudaFree (kept temporary)", cudaFree(b.kept.t[k]));
  rec(r, "cudaFree", cudaFree(b.in));
  rec(r, "cudaFree", cudaFree(b.out));
  return 0;
}

extern "C" int casebook_malloc_in_loop_broken_cpp(const casebook_recorder *r) { return run(r, step_broken, false); }

extern "C" int casebook_malloc_in_loop_fixed_cpp(const casebook_recorder *r) { return run(r, step_fixed, true); }

static int pool_loop(const casebook_recorder *r, Step one, Step versus = nullptr) {
  // The pool gives its memory back at every synchronise unless told to keep
  // it; then the next cudaMallocAsync maps memory anew, which may wait for
  // the device. Keep it for the loop, and trim it after.
  cudaMemPool_t pool;
  rec(r, "cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, 0));
  unsigned long long keep = ~0ULL, none = 0;
  rec(r, "cudaMemPoolSetAttribute (ReleaseThreshold: keep)",
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  // A loop timed against another pool loop is not also timed against the
  // broken one: that comparison is pool's and pool-emptied's.
  int code = run(r, one, versus == nullptr, versus);
  rec(r, "cudaMemPoolTrimTo (0)", cudaMemPoolTrimTo(pool, 0));
  rec(r, "cudaMemPoolSetAttribute (ReleaseThreshold: 0)",
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &none));
  return code;
}

extern "C" int casebook_malloc_in_loop_pool_cpp(const casebook_recorder *r) {
  return pool_loop(r, step_pool<false, false>);
}

// ANCHOR: pool_emptied
// The control of "aiming to reduce the overhead of interacting with the
// GPU's memory management unit": pool, with the pool emptied after each
// step (the stream waited for, then cudaMemPoolTrimTo(pool, 0)), so every
// step's cudaMallocAsync maps its memory anew.
extern "C" int casebook_malloc_in_loop_pool_emptied_cpp(const casebook_recorder *r) {
  return pool_loop(r, step_pool<true, true>);
}
// ANCHOR_END: pool_emptied

// ANCHOR: pool_synced
// "Aiming to reduce the overhead of interacting with the GPU's memory
// management unit", with the host's wait taken out: the pool kept, the
// stream waited for after each step, timed against the same loop with the
// pool emptied after each step (which maps its memory anew every step).
extern "C" int casebook_malloc_in_loop_pool_synced_cpp(const casebook_recorder *r) {
  return pool_loop(r, step_pool<true, false>, step_pool<true, true>);
}
// ANCHOR_END: pool_synced

// ANCHOR: pool_synced_alike
// The control: the same comparison with the baseline loop keeping the pool
// too, so that neither maps memory anew.
extern "C" int casebook_malloc_in_loop_pool_synced_alike_cpp(const casebook_recorder *r) {
  return pool_loop(r, step_pool<true, false>, step_pool<true, false>);
}
// ANCHOR_END: pool_synced_alike
