// open-streams, C++: seed 000's "leaving unmanaged streams can lead to
// resource conflicts and undefined behavior", measured.
//
// Each model call makes a non-blocking stream, copies its own input into the
// one device buffer every call uses, and runs the model on that stream: a
// kernel that spins 20 ms (a model's other work) before it reads the buffer.
// unmanaged: the call returns with its stream still working, and the next
// call copies its input into the same buffer at once, on a stream of its own.
// managed: the call synchronises and destroys its stream before it returns.
// destroyed-unsynced: it destroys its stream without synchronising it first.
// After the calls, every call's output is checked against its own input.

#include <vector>

#include "casebook.h"
#include "names.h"
#include "spin.cuh"

using namespace casebook;

namespace {

const int kCalls = 8;
const int kN = 1 << 16;
const unsigned long long kSpinNs = 20000000ULL;  // 20 ms before the model reads its input

__global__ void model(const float *in, float *out, int n, unsigned long long spin_ns) {
  casebook_spin_ns(spin_ns);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = 2.0f * in[i];
}

// What a call does with its stream before it returns.
enum class Manage { Nothing, SyncAndDestroy, DestroyOnly };

int model_calls(const casebook_recorder *r, Manage manage) {
  float *d_in = nullptr, *d_out = nullptr, *h_in = nullptr, *h_out = nullptr;
  if (rec(r, "cudaMalloc (the input buffer every call uses)", cudaMalloc((void **)&d_in, kN * sizeof(float))) != cudaSuccess)
    return 1;
  if (rec(r, "cudaMalloc (each call's output)", cudaMalloc((void **)&d_out, kCalls * kN * sizeof(float))) != cudaSuccess)
    return 1;
  if (rec(r, "cudaMallocHost (each call's input)", cudaMallocHost((void **)&h_in, kCalls * kN * sizeof(float))) != cudaSuccess)
    return 1;
  if (rec(r, "cudaMallocHost (outputs)", cudaMallocHost((void **)&h_out, kCalls * kN * sizeof(float))) != cudaSuccess)
    return 1;
  for (int c = 0; c < kCalls; ++c)
    for (int i = 0; i < kN; ++i) h_in[c * kN + i] = (float)(c + 1);
  for (int c = 0; c < kCalls; ++c) {
    Iteration it(r, "model call");
    // ANCHOR: call
    cudaStream_t stream;
    rec(r, "cudaStreamCreateWithFlags (non-blocking)", cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    rec(r, "cudaMemcpyAsync HtoD (the shared input)",
        cudaMemcpyAsync(d_in, h_in + c * kN, kN * sizeof(float), cudaMemcpyHostToDevice, stream));
    model<<<8, 256, 0, stream>>>(d_in, d_out + c * kN, kN, kSpinNs);
    rec(r, "model<<<..., stream>>>", cudaGetLastError());
    if (manage == Manage::SyncAndDestroy) rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(stream));
    if (manage != Manage::Nothing) rec(r, "cudaStreamDestroy", cudaStreamDestroy(stream));
    // ANCHOR_END: call
  }
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  rec(r, "cudaMemcpy DtoH (outputs)", cudaMemcpy(h_out, d_out, kCalls * kN * sizeof(float), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int c = 0; c < kCalls; ++c) {
    bool right = true;
    for (int i = 0; i < kN; ++i) right = right && h_out[c * kN + i] == 2.0f * (float)(c + 1);
    wrong += !right;
  }
  measure(r, names::CALLS_MADE, kCalls);
  measure(r, names::CALLS_THAT_READ_ANOTHER_CALL_S_INPUT, wrong);
  check(r, names::EACH_CALL_READS_ITS_OWN_INPUT, wrong == 0);
  rec(r, "cudaFreeHost", cudaFreeHost(h_in));
  rec(r, "cudaFreeHost", cudaFreeHost(h_out));
  rec(r, "cudaFree", cudaFree(d_in));
  rec(r, "cudaFree", cudaFree(d_out));
  return 0;
}

}  // namespace

// ANCHOR: unmanaged
extern "C" int casebook_open_streams_unmanaged_cpp(const casebook_recorder *r) {
  return model_calls(r, Manage::Nothing);
}
// ANCHOR_END: unmanaged

// ANCHOR: managed
extern "C" int casebook_open_streams_managed_cpp(const casebook_recorder *r) {
  return model_calls(r, Manage::SyncAndDestroy);
}
// ANCHOR_END: managed

// ANCHOR: destroyed_unsynced
// The control of "no resource conflicts due to stream synchronization": the
// same calls, each destroying its stream without waiting for it.
extern "C" int casebook_open_streams_destroyed_unsynced_cpp(const casebook_recorder *r) {
  return model_calls(r, Manage::DestroyOnly);
}
// ANCHOR_END: destroyed_unsynced
