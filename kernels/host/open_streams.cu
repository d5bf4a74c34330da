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
#include "spin.cuh"

#include <chrono>

using namespace casebook;

namespace {

const unsigned long long kWorkNs = 200000000ULL;  // the first call's work: 200 ms
const double kDelayed = 0.1;                      // a next call over 100 ms waited for it
const int kIdleStreams = 1000;
const int kN = 1 << 16;

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
void call_leaving_stream_open(const casebook_recorder *r, unsigned flags) {
  cudaStream_t stream;
  rec(r, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&stream, flags));
  work<<<1, 1, 0, stream>>>(kWorkNs);
  rec(r, "work<<<1, 1, 0, stream>>>", cudaGetLastError());
  // no cudaStreamSynchronize, no cudaStreamDestroy
}
// ANCHOR_END: broken

// ANCHOR: fixed
void call_closing_its_stream(const casebook_recorder *r) {
  cudaStream_t stream;
  rec(r, "cudaStreamCreate", cudaStreamCreate(&stream));
  work<<<1, 1, 0, stream>>>(kWorkNs);
  rec(r, "work<<<1, 1, 0, stream>>>", cudaGetLastError());
  rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(stream));
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

double baseline(const casebook_recorder *r, const Buffers &b) {
  next_call(r, b.d_in, b.h_in);  // warm
  double t = next_call(r, b.d_in, b.h_in);
  measure(r, "next_call_alone_s", t, Seconds);
  return t;
}

}  // namespace

extern "C" int casebook_open_streams_broken_cpp(const casebook_recorder *r) {
  Buffers b;
  if (!alloc(r, b)) return 1;
  baseline(r, b);

  {
    Iteration it(r, "idle streams left open");
    for (int i = 0; i < kIdleStreams; ++i) {
      cudaStream_t idle;
      rec(r, "cudaStreamCreate", cudaStreamCreate(&idle));
    }
    double t = next_call(r, b.d_in, b.h_in);
    measure(r, "next_call_after_idle_streams_s", t, Seconds);
    fact(r, "idle open streams delay the next call", t > kDelayed);
  }

  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  call_leaving_stream_open(r, cudaStreamNonBlocking);
  double t_nonblocking = next_call(r, b.d_in, b.h_in);
  measure(r, "next_call_after_open_non_blocking_stream_s", t_nonblocking, Seconds);
  fact(r, "a non-blocking stream with unfinished work delays the next call", t_nonblocking > kDelayed);

  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  call_leaving_stream_open(r, cudaStreamDefault);
  double t_blocking = next_call(r, b.d_in, b.h_in);
  measure(r, "next_call_after_open_blocking_stream_s", t_blocking, Seconds);
  fact(r, "a blocking stream with unfinished work delays the next call", t_blocking > kDelayed);

  check(r, "the next call does not wait for the previous call's work",
        t_blocking <= kDelayed && t_nonblocking <= kDelayed);
  release(r, b);
  return 0;
}

extern "C" int casebook_open_streams_fixed_cpp(const casebook_recorder *r) {
  Buffers b;
  if (!alloc(r, b)) return 1;
  baseline(r, b);
  call_closing_its_stream(r);
  double t = next_call(r, b.d_in, b.h_in);
  measure(r, "next_call_after_closed_stream_s", t, Seconds);
  check(r, "the next call does not wait for the previous call's work", t <= kDelayed);
  release(r, b);
  return 0;
}
