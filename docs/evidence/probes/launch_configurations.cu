// Which error each launch configuration gets under this runtime and driver.
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
typedef CUresult (*launch_t)(CUfunction,unsigned,unsigned,unsigned,unsigned,unsigned,unsigned,unsigned,CUstream,void**,void**);
typedef CUresult (*name_t)(CUresult,const char**);
__global__ void k(float *p, int n) {
  long i = (long)blockIdx.y * gridDim.x * blockDim.x + blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 1.0f;
}
static void rt(const char *label, dim3 g, dim3 b, size_t smem = 0) {
  float *p = nullptr;
  cudaMalloc(&p, 1 << 20);
  k<<<g, b, smem>>>(p, 1 << 18);
  cudaError_t e = cudaGetLastError();
  cudaError_t s = cudaDeviceSynchronize();
  // a later good launch and what cudaGetLastError says then
  k<<<1, 32>>>(p, 32);
  cudaError_t later = cudaGetLastError();
  printf("runtime %-34s -> %s (%d) \"%s\"; sync %s; later launch %s\n", label, cudaGetErrorName(e), (int)e,
         cudaGetErrorString(e), cudaGetErrorName(s), cudaGetErrorName(later));
  cudaFree(p);
}
static void unchecked() {
  // the launch is not checked; a later good launch's check reads the earlier error
  float *p = nullptr;
  cudaMalloc(&p, 1 << 20);
  k<<<dim3(1, 65536), 32>>>(p, 32);
  k<<<1, 32>>>(p, 32);
  cudaError_t e = cudaGetLastError();
  cudaError_t e2 = cudaGetLastError();
  cudaError_t s = cudaDeviceSynchronize();
  printf("unchecked: the good launch's check -> %s; again -> %s; sync %s\n", cudaGetErrorName(e), cudaGetErrorName(e2), cudaGetErrorName(s));
  k<<<dim3(1, 65536), 32>>>(p, 32);
  cudaError_t peek = cudaPeekAtLastError();
  cudaError_t s2 = cudaDeviceSynchronize();
  cudaError_t after = cudaGetLastError();
  printf("unchecked: peek -> %s; cudaDeviceSynchronize -> %s; then cudaGetLastError -> %s\n", cudaGetErrorName(peek), cudaGetErrorName(s2), cudaGetErrorName(after));
  cudaFree(p);
}
static void drv(const char *label, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz) {
  cudaFree(0);
  CUfunction f;
  cudaFunction_t rf;
  cudaGetFuncBySymbol(&rf, (const void *)k);
  f = (CUfunction)rf;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  launch_t launch = (launch_t)dlsym(lib, "cuLaunchKernel");
  name_t gname = (name_t)dlsym(lib, "cuGetErrorName");
  name_t gstr = (name_t)dlsym(lib, "cuGetErrorString");
  float *p = nullptr;
  cudaMalloc(&p, 1 << 20);
  int n = 1 << 18;
  void *args[] = {&p, &n};
  CUresult r = launch(f, gx, gy, gz, bx, by, bz, 0, 0, args, nullptr);
  const char *name = nullptr, *str = nullptr;
  gname(r, &name);
  gstr(r, &str);
  cudaError_t s = cudaDeviceSynchronize();
  printf("driver  %-34s -> %s (%d) \"%s\"; sync %s\n", label, name, (int)r, str, cudaGetErrorName(s));
  cudaFree(p);
}
int main() {
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  printf("%s maxGridSize %d %d %d maxThreadsDim %d %d %d maxThreadsPerBlock %d\n", prop.name, prop.maxGridSize[0],
         prop.maxGridSize[1], prop.maxGridSize[2], prop.maxThreadsDim[0], prop.maxThreadsDim[1], prop.maxThreadsDim[2],
         prop.maxThreadsPerBlock);
  int rv = 0, dv = 0;
  cudaRuntimeGetVersion(&rv);
  cudaDriverGetVersion(&dv);
  printf("runtime %d driver %d\n", rv, dv);
  rt("grid (1,65535,1) block 32", dim3(1, 65535), 32);
  rt("grid (1,65536,1) block 32", dim3(1, 65536), 32);
  rt("grid (1,1,65536) block 32", dim3(1, 1, 65536), 32);
  rt("grid (0,1,1) block 32", dim3(0), 32);
  rt("grid (1,0,1) block 32", dim3(1, 0), 32);
  rt("grid (1,1,1) block 0", dim3(1), dim3(0));
  rt("grid (2^31-1,1,1) block 32", dim3(2147483647u), 32);
  rt("grid (2^31,1,1) block 32", dim3(2147483648u), 32);
  rt("block (1024,1,1)", 1, 1024);
  rt("block (1025,1,1)", 1, 1025);
  rt("block (2048,1,1)", 1, 2048);
  rt("block (32,32,2)", 1, dim3(32, 32, 2));
  rt("block (1,1,65)", 1, dim3(1, 1, 65));
  rt("block (1,1,64)", 1, dim3(1, 1, 64));
  rt("smem 48K+1 dynamic", 1, 32, 48 * 1024 + 1);
  rt("smem 300K dynamic", 1, 32, 300 * 1024);
  unchecked();
  drv("grid (1,65536,1) block 32", 1, 65536, 1, 32, 1, 1);
  drv("grid (0,1,1) block 32", 0, 1, 1, 32, 1, 1);
  drv("block (1025,1,1)", 1, 1, 1, 1025, 1, 1);
  drv("block (1,1,65)", 1, 1, 1, 1, 1, 65);
  return 0;
}
