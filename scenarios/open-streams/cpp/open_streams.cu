// open-streams, C++: seed 000's "leaving open CUDA streams can interfere with
// subsequent operations", measured.
//
// A "model call" that returns with a stream still open, and the next call
// timed after it. Three ways to leave a stream open: idle ones (created and
// never destroyed), a blocking stream (cudaStreamCreate) with its work still
// running, and a non-blocking one with its work still running. The next call
// copies to the device with cudaMemcpy, on the legacy default stream, as most
// code does. fixed: the call finishes its work and destroys its stream.

#include "casebook.h"
#include "names.h"
#include "spin.cuh"

#include <algorithm>
#include <chrono>
#include <vector>

using namespace casebook;

namespace {

const unsigned long long kWorkNs = 200000000ULL;  // the first call's work: 200 ms
const double kDelayed = 0.1;                      // a next call over 100 ms waited for it
const int kIdleStreams = 1000;
const int kTimed = 21;       // next calls timed before and after the idle streams, for a median each
const double kSlower = 1.5;  // idle streams slow the next call: its median at least 1.5 times as long
const int kRounds = 5;       // ... in four rounds of five (compare_pairs): a slow moment of the host slows one
const int kN = 1 << 16;
const int kStreamCalls = 100000;  // calls that each make a stream and run a kernel on it
// Device memory the calls may take each and still leave it where it was:
// 400 MB over the 100,000, beside the driver's 2 MiB granules.
const double kPerCallTolerance = 4096;

__global__ void work(unsigned long long ns) { casebook_spin_ns(ns); }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The next model call: copy its input to the device. Returns its duration.
double next_call(const casebook_recorder *r, float *d_in, const float *h_in) {
  auto start = std::chrono::steady_clock::now();
  rec(r, "cudaMemcpy HtoD", cudaMemcpy(d_in, h_in, kN * sizeof(float), cudaMemcpyHostToDevice));
  return seconds_since(start);
}

// ANCHOR: broken
// The first call returns as soon as its work is queued; its stream stays open.
void call_leaving_stream_open(const casebook_recorder *r, unsigned flags, unsigned long long work_ns) {
  cudaStream_t stream;
  rec(r, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&stream, flags));
  work<<<1, 1, 0, stream>>>(work_ns);
  rec(r, "work<<<1, 1, 0, stream>>>", cudaGetLastError());
  // no cudaStreamSynchronize, no cudaStreamDestroy
}
// ANCHOR_END: broken

// ANCHOR: fixed
// (`sync` is false only in destroy-only-cpp, which destroys the stream
// without waiting for it: the next call then waits behind its work.)
void call_closing_its_stream(const casebook_recorder *r, bool sync) {
  cudaStream_t stream;
  rec(r, "cudaStreamCreate", cudaStreamCreate(&stream));
  work<<<1, 1, 0, stream>>>(kWorkNs);
  rec(r, "work<<<1, 1, 0, stream>>>", cudaGetLastError());
  if (sync) rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(stream));
  rec(r, "cudaStreamDestroy", cudaStreamDestroy(stream));
}
// ANCHOR_END: fixed

struct Buffers {
  float *d_in = nullptr;
  float *h_in = nullptr;
};

bool alloc(const casebook_recorder *r, Buffers &b) {
  b.h_in = new float[kN]();
  return rec(r, "cudaMalloc", cudaMalloc((void **)&b.d_in, kN * sizeof(float))) == cudaSuccess;
}

void release(const casebook_recorder *r, Buffers &b) {
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  rec(r, "cudaFree", cudaFree(b.d_in));
  delete[] b.h_in;
}

// The median of kTimed next calls.
double median_next_call(const casebook_recorder *r, const Buffers &b) {
  double t[kTimed];
  for (int i = 0; i < kTimed; ++i) t[i] = next_call(r, b.d_in, b.h_in);
  std::sort(t, t + kTimed);
  return t[kTimed / 2];
}

double baseline(const casebook_recorder *r, const Buffers &b) {
  next_call(r, b.d_in, b.h_in);  // warm
  double t = next_call(r, b.d_in, b.h_in);
  measure(r, names::NEXT_CALL_ALONE_S, t);
  return t;
}

// The three ways to leave a stream open, the first call's work lasting
// `work_ns`: kWorkNs in the broken variant, none in the control.
int leave_streams_open(const casebook_recorder *r, unsigned long long work_ns);

}  // namespace

extern "C" int casebook_open_streams_broken_cpp(const casebook_recorder *r) {
  return leave_streams_open(r, kWorkNs);
}

// ANCHOR: no_work
// The control of "open streams interfere": the same program, the first
// call's kernel given no time to spin.
extern "C" int casebook_open_streams_no_work_cpp(const casebook_recorder *r) {
  return leave_streams_open(r, 0);
}
// ANCHOR_END: no_work

namespace {

int leave_streams_open(const casebook_recorder *r, unsigned long long work_ns) {
  Buffers b;
  if (!alloc(r, b)) return 1;
  baseline(r, b);

  {
    // The next call timed before and after 1000 idle blocking streams are
    // left open, a median of 21 each: the legacy default stream, where it
    // runs, synchronises with every blocking stream; does an idle one cost
    // it anything? Five rounds, the streams destroyed between them; those
    // of the last stay open for the rest of the program.
    Iteration it(r, "idle streams left open");
    double before[kRounds], after[kRounds];
    for (int round = 0; round < kRounds; ++round) {
      before[round] = median_next_call(r, b);
      std::vector<cudaStream_t> idle(kIdleStreams);
      cudaError_t made = cudaSuccess;
      for (cudaStream_t &s : idle) {
        keep_first_error(made, cudaStreamCreate(&s));
      }
      rec(r, "cudaStreamCreate (1000 idle streams)", made);
      after[round] = median_next_call(r, b);
      if (round + 1 < kRounds) {
        cudaError_t gone = cudaSuccess;
        for (cudaStream_t s : idle) {
          keep_first_error(gone, cudaStreamDestroy(s));
        }
        rec(r, "cudaStreamDestroy (the 1000 idle streams)", gone);
      }
    }
    fact(r, names::IDLE_OPEN_STREAMS_SLOW_THE_NEXT_CALL,
         compare_pairs(r, after, before, kRounds, 0.0, kSlower) == Larger::A);
    std::sort(before, before + kRounds);
    std::sort(after, after + kRounds);
    measure(r, names::NEXT_CALL_BEFORE_IDLE_STREAMS_S, before[kRounds / 2]);
    measure(r, names::NEXT_CALL_AFTER_IDLE_STREAMS_S, after[kRounds / 2]);
  }

  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  call_leaving_stream_open(r, cudaStreamNonBlocking, work_ns);
  double t_nonblocking = next_call(r, b.d_in, b.h_in);
  measure(r, names::NEXT_CALL_AFTER_OPEN_NON_BLOCKING_STREAM_S, t_nonblocking);
  fact(r, names::A_NON_BLOCKING_STREAM_WITH_UNFINISHED_WORK_DELAYS_THE_NEXT_CALL, t_nonblocking > kDelayed);

  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  call_leaving_stream_open(r, cudaStreamDefault, work_ns);
  double t_blocking = next_call(r, b.d_in, b.h_in);
  measure(r, names::NEXT_CALL_AFTER_OPEN_BLOCKING_STREAM_S, t_blocking);
  fact(r, names::A_BLOCKING_STREAM_WITH_UNFINISHED_WORK_DELAYS_THE_NEXT_CALL, t_blocking > kDelayed);

  // The same blocking stream, destroyed before the call returns but not
  // waited for: whether what delays the next call is the stream left open
  // or the work it still holds (cudaStreamDestroy returns at once and lets
  // the work finish).
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  {
    cudaStream_t stream;
    rec(r, "cudaStreamCreate", cudaStreamCreate(&stream));
    work<<<1, 1, 0, stream>>>(work_ns);
    rec(r, "work<<<1, 1, 0, stream>>>", cudaGetLastError());
    rec(r, "cudaStreamDestroy (its work unfinished)", cudaStreamDestroy(stream));
  }
  double t_destroyed = next_call(r, b.d_in, b.h_in);
  measure(r, names::NEXT_CALL_AFTER_DESTROYED_BLOCKING_STREAM_S, t_destroyed);
  fact(r, names::A_BLOCKING_STREAM_DESTROYED_WITH_ITS_WORK_UNFINISHED_DELAYS_THE_NEXT_CALL,
       t_destroyed > kDelayed);

  check(r, names::NO_WAIT,
        t_blocking <= kDelayed && t_nonblocking <= kDelayed);

  release(r, b);
  return 0;
}

int close_stream(const casebook_recorder *r, bool sync) {
  Buffers b;
  if (!alloc(r, b)) return 1;
  baseline(r, b);
  call_closing_its_stream(r, sync);
  double t = next_call(r, b.d_in, b.h_in);
  measure(r, names::NEXT_CALL_AFTER_CLOSED_STREAM_S, t);
  check(r, names::NO_WAIT, t <= kDelayed);
  release(r, b);
  return 0;
}

}  // namespace

extern "C" int casebook_open_streams_fixed_cpp(const casebook_recorder *r) {
  return close_stream(r, true);
}

// ANCHOR: destroy_only
// The same program, its stream destroyed without cudaStreamSynchronize: the
// next call's copy waits behind the stream's work (a wait, not a conflict;
// the conflict is unmanaged_streams.cu's, calls reading each other's input).
extern "C" int casebook_open_streams_destroy_only_cpp(const casebook_recorder *r) {
  return close_stream(r, false);
}
// ANCHOR_END: destroy_only

namespace {

// ANCHOR: stream_per_call
// One allocation of `bytes`, freed at once if served: whether it is served.
bool served(const casebook_recorder *r, const char *call, size_t bytes) {
  void *p = nullptr;
  cudaError_t err = tolerate(r, call, cudaMalloc(&p, bytes));
  if (err == cudaSuccess) rec(r, "cudaFree", cudaFree(p));
  cudaGetLastError();
  return err == cudaSuccess;
}

// 100,000 calls, each making a blocking stream and running a kernel on it;
// each destroys its stream before it returns, or leaves it open. The
// device's free memory before and after them: what a stream left open
// holds, and whether cudaStreamDestroy gives it back. Then a later
// operation: an allocation of half the memory free before the calls,
// served before them, asked for again. The calls' steps are not recorded
// one by one, only the first that fails.
int stream_per_call(const casebook_recorder *r, bool destroy) {
  size_t free_before = 0, free_after = 0, total = 0;
  rec(r, "cudaMemGetInfo", cudaMemGetInfo(&free_before, &total));
  const size_t half = free_before / 2 / (size_t(2) << 20) * (size_t(2) << 20);
  const bool before = served(r, "cudaMalloc (half the free memory, before the calls)", half);
  int completed = 0;
  cudaError_t failed = cudaSuccess;
  for (int i = 0; i < kStreamCalls && failed == cudaSuccess; ++i) {
    cudaStream_t s;
    failed = cudaStreamCreate(&s);
    if (failed == cudaSuccess) {
      work<<<1, 1, 0, s>>>(0);
      failed = cudaGetLastError();
    }
    if (failed == cudaSuccess && destroy) failed = cudaStreamDestroy(s);
    if (failed == cudaSuccess) ++completed;
  }
  if (failed != cudaSuccess) rec(r, "the first call that failed", failed);
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  rec(r, "cudaMemGetInfo", cudaMemGetInfo(&free_after, &total));
  double per_call = completed > 0 ? (double(free_before) - double(free_after)) / completed : 0.0;
  measure(r, names::CALLS_THAT_COMPLETED, completed);
  measure(r, names::DEVICE_BYTES_PER_CALL, per_call);
  check(r, names::DEVICE_MEMORY_STAYS_WHERE_IT_WAS, per_call < kPerCallTolerance);
  const bool after = served(r, "cudaMalloc (the same, after the calls)", half);
  fact(r, names::AN_ALLOCATION_SERVED_BEFORE_THE_CALLS_IS_REFUSED_AFTER_THEM, before && !after);
  return failed == cudaSuccess ? 0 : 1;
}
// ANCHOR_END: stream_per_call

}  // namespace

// ANCHOR: leak_streams
extern "C" int casebook_open_streams_leak_streams_cpp(const casebook_recorder *r) {
  return stream_per_call(r, false);  // BUG: no cudaStreamDestroy
}
// ANCHOR_END: leak_streams

// ANCHOR: destroy_streams
extern "C" int casebook_open_streams_destroy_streams_cpp(const casebook_recorder *r) {
  return stream_per_call(r, true);  // FIX: each call destroys its stream
}
// ANCHOR_END: destroy_streams
