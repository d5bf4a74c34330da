// Memory freed on busy streams, asked for on another before any synchronise.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
__device__ __forceinline__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__global__ void spin(unsigned long long ns) { unsigned long long s = gt(); while (gt() - s < ns) {} }
static size_t freeb() { size_t f, t; cudaMemGetInfo(&f, &t); return f; }
static uint64_t attr(cudaMemPool_t p, cudaMemPoolAttr a) { uint64_t v = 0; cudaMemPoolGetAttribute(p, a, &v); return v; }
static void run(int reuse, int nstreams, size_t per, double frac, size_t outside, bool same = false, int blocks = 1, bool sync = false) {
  cudaMemPool_t pool; cudaDeviceGetDefaultMemPool(&pool, 0);
  uint64_t thr = UINT64_MAX; cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &thr);
  int v = reuse;
  cudaMemPoolSetAttribute(pool, cudaMemPoolReuseFollowEventDependencies, &v);
  cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &v);
  cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &v);
  size_t total = per * nstreams * blocks;
  void *ballast; size_t f0 = freeb();
  cudaError_t be = cudaMalloc(&ballast, f0 - total - outside);
  cudaStream_t s[8], asker; for (int k = 0; k < nstreams; ++k) cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&asker, cudaStreamNonBlocking);
  void *p[64];
  for (int k = 0; k < nstreams; ++k) {
    spin<<<1, 1, 0, s[k]>>>(2000000000ull);
    for (int b = 0; b < blocks; ++b) cudaMallocAsync(&p[k * blocks + b], per, s[k]);
    for (int b = 0; b < blocks; ++b) cudaFreeAsync(p[k * blocks + b], s[k]);
  }
  if (sync) cudaDeviceSynchronize();
  cudaError_t q = cudaStreamQuery(s[0]);
  uint64_t res = attr(pool, cudaMemPoolAttrReservedMemCurrent), used = attr(pool, cudaMemPoolAttrUsedMemCurrent);
  size_t fb = freeb();
  size_t ask = (size_t)(total * frac) / (2 << 20) * (2 << 20);
  void *big = nullptr;
  cudaStream_t on = same ? s[0] : asker;
  cudaError_t e = cudaMallocAsync(&big, ask, on);
  uint64_t res2 = attr(pool, cudaMemPoolAttrReservedMemCurrent);
  cudaError_t q2 = cudaStreamQuery(on);
  printf("sync=%d blocks=%d same=%d reuse=%d streams=%d per=%zuMiB ask=%zuMiB outside=%zuMiB ballast=%s | s0 %s; pool reserved %lluMiB used %lluMiB; free %zuMiB | ask -> %s; reserved after %lluMiB; asker stream %s\n",
         (int)sync, blocks, (int)same, reuse, nstreams, per >> 20, ask >> 20, outside >> 20, cudaGetErrorName(be), cudaGetErrorName(q), (unsigned long long)res >> 20,
         (unsigned long long)used >> 20, fb >> 20, cudaGetErrorName(e), (unsigned long long)res2 >> 20, cudaGetErrorName(q2));
  cudaGetLastError();
  if (e == cudaSuccess) cudaFreeAsync(big, on);
  cudaDeviceSynchronize();
  cudaMemPoolTrimTo(pool, 0);
  cudaFree(ballast);
  for (int k = 0; k < nstreams; ++k) cudaStreamDestroy(s[k]);
  cudaStreamDestroy(asker);
  cudaGetLastError();
}
int main() {
  cudaFree(0);
  const size_t MiB = 1 << 20;
  run(1, 1, 512 * MiB, 0.9, 256 * MiB, false, 8);        // eight blocks on one busy stream, asked on another
  run(1, 1, 512 * MiB, 0.9, 256 * MiB, true, 8);         // the same, asked on that stream
  run(1, 8, 512 * MiB, 0.9, 256 * MiB, true);            // eight streams, asked on stream 0
  run(1, 8, 512 * MiB, 0.9, 256 * MiB, false, 1, true);  // eight streams, asked after a synchronise
  run(1, 1, 512 * MiB, 0.9, 256 * MiB, false, 8, true);  // one stream, after a synchronise
  run(1, 8, 512 * MiB, 0.9, 256 * MiB);                  // eight streams again
  return 0;
}
