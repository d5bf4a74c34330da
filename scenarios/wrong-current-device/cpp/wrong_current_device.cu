// wrong-current-device, C++: a library's op (an extension's kernel wrapper)
// launches its kernel on whatever device is current. The caller's data is on
// device 1, the GPU its job was given; the current device is 0, the default
// that a new thread, a framework or other work leaves. The kernel runs on
// device 0 and dereferences device 1's memory.

#include "casebook.h"
#include "names.h"
#include "twice.cuh"

#include <vector>

using namespace casebook;

static const int kN = 1 << 20;
static const size_t kBytes = kN * sizeof(float);

static __global__ void twiceKernel(float *data, int n) { casebook_twice(data, n); }

static float value(int i) { return float(i % 1000); }

// The op as the threads' extensions had it: no device guard, so it runs on
// the current device whatever device holds `data`.
static cudaError_t twice_unguarded(const casebook_recorder *r, float *data, int n) {
  twiceKernel<<<(n + 255) / 256, 256>>>(data, n);
  return rec(r, "twiceKernel<<<>>> (on the current device)", cudaGetLastError());
}

// The same op with a device guard: it runs on the device that holds `data`,
// and gives the caller its current device back, as at::cuda::CUDAGuard does.
static cudaError_t twice_guarded(const casebook_recorder *r, float *data, int n) {
  cudaPointerAttributes attributes{};
  cudaError_t err = rec(r, "cudaPointerGetAttributes (the data's device)",
                        cudaPointerGetAttributes(&attributes, data));
  if (err != cudaSuccess) return err;
  int caller = 0;
  err = rec(r, "cudaGetDevice (the caller's)", cudaGetDevice(&caller));
  if (err == cudaSuccess) err = rec(r, "cudaSetDevice (the data's device)", cudaSetDevice(attributes.device));
  if (err != cudaSuccess) return err;
  twiceKernel<<<(n + 255) / 256, 256>>>(data, n);
  err = rec(r, "twiceKernel<<<>>> (on the data's device)", cudaGetLastError());
  cudaError_t back = rec(r, "cudaSetDevice (the caller's again)", cudaSetDevice(caller));
  return err != cudaSuccess ? err : back;
}

// The caller's data on device 1; then device 0 current again. Records what
// cudaDeviceCanAccessPeer says of the pair.
static cudaError_t setup(const casebook_recorder *r, float **data) {
  int peer = 0;
  cudaError_t err = rec(r, "cudaDeviceCanAccessPeer (device 0 to device 1's memory)",
                        cudaDeviceCanAccessPeer(&peer, 0, 1));
  if (err != cudaSuccess) return err;
  fact(r, names::PEER_CAPABLE, peer != 0);
  std::vector<float> host(kN);
  for (int i = 0; i < kN; ++i) host[i] = value(i);
  err = rec(r, "cudaSetDevice(1) (the job's GPU)", cudaSetDevice(1));
  if (err == cudaSuccess) err = rec(r, "cudaMalloc (on device 1)", cudaMalloc((void **)data, kBytes));
  if (err == cudaSuccess)
    err = rec(r, "cudaMemcpy (to device 1)", cudaMemcpy(*data, host.data(), kBytes, cudaMemcpyHostToDevice));
  if (err == cudaSuccess) err = rec(r, "cudaSetDevice(0) (the default)", cudaSetDevice(0));
  return err;
}

// Waits for the op on both devices (it ran on one of them), reads the data
// back on device 1, and tries one unrelated call on each device: which
// device's context the op left usable.
static void finish(const casebook_recorder *r, float *data, cudaError_t launched) {
  std::vector<float> host(kN, 0.0f);
  cudaError_t err = launched;
  for (int device = 0; device < 2 && err == cudaSuccess; ++device) {
    cudaSetDevice(device);
    err = rec(r, device == 0 ? "cudaDeviceSynchronize (device 0)" : "cudaDeviceSynchronize (device 1)",
              cudaDeviceSynchronize());
  }
  cudaSetDevice(1);
  cudaError_t copied = rec(r, "cudaMemcpy (from device 1)", cudaMemcpy(host.data(), data, kBytes, cudaMemcpyDeviceToHost));
  bool same = err == cudaSuccess && copied == cudaSuccess;
  for (int i = 0; same && i < kN; ++i) same = host[i] == 2.0f * value(i);
  check(r, names::MATCHES, same);
  cudaSetDevice(0);
  later_call(r, names::LATER_CALL_DEVICE0);
  cudaSetDevice(1);
  if (later_call(r, names::LATER_CALL_DEVICE1)) rec(r, "cudaFree (device 1)", cudaFree(data));
}

extern "C" int casebook_wrong_current_device_broken_cpp(const casebook_recorder *r) {
  float *data = nullptr;
  if (setup(r, &data) != cudaSuccess) return 1;
  // ANCHOR: broken
  // The data is on device 1; the current device is 0.
  cudaError_t launched = twice_unguarded(r, data, kN);  // BUG: the op runs on device 0
  // ANCHOR_END: broken
  finish(r, data, launched);
  return 0;
}

extern "C" int casebook_wrong_current_device_fixed_cpp(const casebook_recorder *r) {
  float *data = nullptr;
  if (setup(r, &data) != cudaSuccess) return 1;
  // ANCHOR: fixed
  // The data is on device 1; the current device is 0.
  cudaError_t launched = twice_guarded(r, data, kN);  // FIX: the op runs on the data's device
  // ANCHOR_END: fixed
  finish(r, data, launched);
  return 0;
}

extern "C" int casebook_wrong_current_device_peer_cpp(const casebook_recorder *r) {
  float *data = nullptr;
  if (setup(r, &data) != cudaSuccess) return 1;
  // ANCHOR: peer
  // The data is on device 1; the current device is 0, now with access to device 1's memory.
  cudaError_t enabled = rec(r, "cudaDeviceEnablePeerAccess (device 0 to device 1's memory)", cudaDeviceEnablePeerAccess(1, 0));
  cudaError_t launched = twice_unguarded(r, data, kN);  // still on device 0
  // ANCHOR_END: peer
  fact(r, names::PEER_ENABLED, enabled == cudaSuccess);
  finish(r, data, launched);
  return 0;
}
