// wrong-current-device, C++: a library's op (an extension's kernel wrapper)
// launches its kernel on whatever device is current. The caller's data is on
// device 1, the GPU its job was given; the current device is 0, the default
// that a new thread, a framework or other work leaves. The kernel runs on
// device 0 and dereferences device 1's memory.

#include "casebook.h"
#include "names.h"
#include "twice.cuh"

#include <algorithm>
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

// The op from device 0 on `data`, memory of device 1 that `fill` wrote:
// whether it came back doubled. A fault here leaves device 0's context lost,
// so the probe that may fault comes last.
static bool reached(const casebook_recorder *r, const char *what, float *data) {
  std::vector<float> host(kN);
  for (int i = 0; i < kN; ++i) host[i] = value(i);
  cudaSetDevice(1);
  cudaError_t err = rec(r, what, cudaMemcpy(data, host.data(), kBytes, cudaMemcpyHostToDevice));
  if (err == cudaSuccess) err = cudaSetDevice(0);
  if (err == cudaSuccess) err = twice_unguarded(r, data, kN);
  if (err == cudaSuccess) err = rec(r, "cudaDeviceSynchronize (device 0)", cudaDeviceSynchronize());
  cudaSetDevice(1);
  std::fill(host.begin(), host.end(), 0.0f);
  cudaError_t copied = rec(r, "cudaMemcpy (from device 1)", cudaMemcpy(host.data(), data, kBytes, cudaMemcpyDeviceToHost));
  bool same = err == cudaSuccess && copied == cudaSuccess;
  for (int i = 0; same && i < kN; ++i) same = host[i] == 2.0f * value(i);
  return same;
}

// "All allocations from peerDevice": after the enable, two more of device 1's
// allocations reached by the same op from device 0: a buffer from cudaMalloc,
// and a block of device 1's default stream-ordered pool (with kGrant, the pool
// gives device 0 access first, as NVIDIA's notes on pools and peer access say
// it must).
template <bool kGrant>
static void later_allocations(const casebook_recorder *r) {
  cudaSetDevice(1);
  float *after = nullptr;
  if (rec(r, "cudaMalloc (on device 1, after the enable)", cudaMalloc((void **)&after, kBytes)) == cudaSuccess) {
    fact(r, names::A_CUDAMALLOC_BUFFER_MADE_AFTER_THE_ENABLE_IS_REACHED,
         reached(r, "cudaMemcpy (to the buffer made after the enable)", after));
    cudaSetDevice(1);
    rec(r, "cudaFree (device 1)", cudaFree(after));
  }
  cudaSetDevice(1);
  cudaMemPool_t pool;
  if (rec(r, "cudaDeviceGetDefaultMemPool (device 1)", cudaDeviceGetDefaultMemPool(&pool, 1)) != cudaSuccess) return;
  cudaMemLocation device0{};
  device0.type = cudaMemLocationTypeDevice;
  device0.id = 0;
  // ANCHOR: grant
  if (kGrant) {
    cudaMemAccessDesc access{};
    access.location = device0;
    access.flags = cudaMemAccessFlagsProtReadWrite;
    rec(r, "cudaMemPoolSetAccess (device 0 to device 1's pool)", cudaMemPoolSetAccess(pool, &access, 1));
  }
  // ANCHOR_END: grant
  cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
  rec(r, "cudaMemPoolGetAccess (device 0 to device 1's pool)", cudaMemPoolGetAccess(&flags, pool, &device0));
  fact_text(r, names::DEVICE_0_S_ACCESS_TO_DEVICE_1_S_POOL,
            flags == cudaMemAccessFlagsProtReadWrite ? "read-write" : flags == cudaMemAccessFlagsProtRead ? "read" : "none");
  float *block = nullptr;
  cudaError_t err = rec(r, "cudaMallocAsync (device 1's default pool)", cudaMallocAsync((void **)&block, kBytes, 0));
  if (err == cudaSuccess) err = rec(r, "cudaStreamSynchronize (device 1)", cudaStreamSynchronize(0));
  if (err != cudaSuccess) return;
  fact(r, names::A_POOL_BLOCK_OF_DEVICE_1_IS_REACHED, reached(r, "cudaMemcpy (to the pool's block)", block));
  cudaSetDevice(1);
  rec(r, "cudaFreeAsync (device 1)", cudaFreeAsync(block, 0));
  rec(r, "cudaStreamSynchronize (device 1)", cudaStreamSynchronize(0));
}

template <bool kGrant>
static int peer(const casebook_recorder *r) {
  float *data = nullptr;
  if (setup(r, &data) != cudaSuccess) return 1;
  // ANCHOR: peer
  // The data is on device 1; the current device is 0, now with access to device 1's memory.
  cudaError_t enabled = rec(r, "cudaDeviceEnablePeerAccess (device 0 to device 1's memory)", cudaDeviceEnablePeerAccess(1, 0));
  cudaError_t launched = twice_unguarded(r, data, kN);  // still on device 0
  // ANCHOR_END: peer
  fact(r, names::PEER_ENABLED, enabled == cudaSuccess);
  finish(r, data, launched);
  if (enabled == cudaSuccess) later_allocations<kGrant>(r);
  return 0;
}

extern "C" int casebook_wrong_current_device_peer_cpp(const casebook_recorder *r) {
  return peer<false>(r);
}

// ANCHOR: peer_pool_access
// The same, with device 1's default pool giving device 0 access before its
// block is asked for.
extern "C" int casebook_wrong_current_device_peer_pool_access_cpp(const casebook_recorder *r) {
  return peer<true>(r);
}
// ANCHOR_END: peer_pool_access
