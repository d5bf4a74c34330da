// sticky-error, C++: seed 000, example 2, made complete and run as written.
//
// runModel(context1), cudaDeviceReset(), runModel(context2): the article's
// "proper context management". The first model call here has a kernel that
// faults; the question is whether the reset gives the second one a clean
// context.

#include "casebook.h"
#include "names.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace casebook;

static __global__ void faultingKernel() { *(volatile int *)nullptr = 1; }

// A device-side check that gives up the way library code does without an
// assert's message: __trap().
static __global__ void trappingKernel() {
  if (threadIdx.x == 0) __trap();
}

static __global__ void scaleKernel(float *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= 2.0f;
}

// A model call; `faulty` gives it the bug.
static cudaError_t runModel(const casebook_recorder *r, bool faulty) {
  const int n = 1 << 20;
  float *d_data = nullptr;
  cudaError_t err = faulty ? tolerate(r, "cudaMalloc", cudaMalloc((void **)&d_data, n * sizeof(float)))
                           : rec(r, "cudaMalloc", cudaMalloc((void **)&d_data, n * sizeof(float)));
  if (err != cudaSuccess) return err;
  if (faulty) {
    faultingKernel<<<1, 32>>>();
    tolerate(r, "faultingKernel<<<>>>", cudaGetLastError());
    err = tolerate(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
    tolerate(r, "cudaFree", cudaFree(d_data));
  } else {
    // The model's input: without it the kernel would scale uninitialised
    // memory, which compute-sanitizer's initcheck reports.
    rec(r, "cudaMemset (input)", cudaMemset(d_data, 0, n * sizeof(float)));
    scaleKernel<<<(n + 255) / 256, 256>>>(d_data, n);
    rec(r, "scaleKernel<<<>>>", cudaGetLastError());
    err = rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
    rec(r, "cudaFree", cudaFree(d_data));
  }
  return err;
}

// ANCHOR: as_written
extern "C" int casebook_sticky_error_as_written_cpp(const casebook_recorder *r) {
  int mode = -1;  // added: the compute mode, which cudaErrorDevicesUnavailable can stem from
  rec(r, "cudaDeviceGetAttribute (compute mode)", cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, 0));
  fact_text(r, names::COMPUTE_MODE, mode == cudaComputeModeDefault ? "default" : mode == cudaComputeModeExclusiveProcess ? "exclusive process" : mode == cudaComputeModeProhibited ? "prohibited" : "other");
  {
    Iteration it(r, "first model call");
    runModel(r, true);  // First model call
  }
  cudaError_t reset = rec(r, "cudaDeviceReset", cudaDeviceReset());  // Reset CUDA context
  fact_text(r, names::RESET_RETURNS, cudaGetErrorName(reset));
  cudaError_t second;
  {
    Iteration it(r, "second model call");
    second = runModel(r, false);  // Second model call
  }
  fact_text(r, names::SECOND, cudaGetErrorName(second));
  fact(r, names::AFTER_RESET, second == cudaSuccess);
  return 0;
}
// ANCHOR_END: as_written

// The faulting model call as the child process runs it: it records nothing
// (the recorder is the parent's) and returns what the synchronisation gave.
static cudaError_t childModel() {
  float *d_data = nullptr;
  cudaError_t err = cudaMalloc((void **)&d_data, 1 << 20);
  if (err != cudaSuccess) return err;
  faultingKernel<<<1, 32>>>();
  err = cudaDeviceSynchronize();
  cudaFree(d_data);
  return err;
}

// Runs childModel in a process forked before this one touches CUDA; its
// result, or cudaErrorUnknown if the child sent none within a minute.
static cudaError_t inChildProcess() {
  int fds[2];
  if (pipe(fds) != 0) return cudaErrorUnknown;
  pid_t pid = fork();
  if (pid < 0) return cudaErrorUnknown;
  if (pid == 0) {
    close(fds[0]);
    int err = (int)childModel();
    ssize_t ignored = write(fds[1], &err, sizeof err);
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  int err = (int)cudaErrorUnknown;
  struct pollfd p = {fds[0], POLLIN, 0};
  if (poll(&p, 1, 60 * 1000) <= 0 || read(fds[0], &err, sizeof err) != (ssize_t)sizeof err) {
    kill(pid, SIGKILL);
    err = (int)cudaErrorUnknown;
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return (cudaError_t)err;
}

// ANCHOR: fixed
extern "C" int casebook_sticky_error_fixed_cpp(const casebook_recorder *r) {
  // FIX: the call that may fault gets a process of its own, started before
  // this one touches CUDA; its fault dies with it.
  tolerate(r, "child process: first model call", inChildProcess());
  cudaError_t second;
  {
    Iteration it(r, "second model call");
    second = runModel(r, false);  // Second model call, in this process's clean context
  }
  fact_text(r, names::SECOND, cudaGetErrorName(second));
  // ANCHOR_END: fixed
  void *p = nullptr;
  cudaError_t third = rec(r, "third call: cudaMalloc", cudaMalloc(&p, 1 << 20));
  if (third == cudaSuccess) third = rec(r, "third call: cudaFree", cudaFree(p));
  fact_text(r, names::THIRD_CALL_RETURNS, cudaGetErrorName(third));
  return 0;
}

// The first model call's kernel traps instead of touching a bad address:
// the driver names that fault no better than "unspecified launch failure",
// and the second call gets it too.
extern "C" int casebook_sticky_error_trap_cpp(const casebook_recorder *r) {
  // ANCHOR: trap
  trappingKernel<<<1, 32>>>();  // the first model call: its kernel traps
  rec(r, "trappingKernel<<<>>>", cudaGetLastError());
  rec(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  cudaError_t second;
  {
    Iteration it(r, "second model call");
    second = runModel(r, false);  // Second model call
  }
  // ANCHOR_END: trap
  fact_text(r, names::SECOND, cudaGetErrorName(second));
  return 0;
}

// A model call whose launch is refused (more threads per block than any GPU
// allows): an error the runtime returns at the launch, not a fault; the
// context stays usable.
static cudaError_t refusedModel(const casebook_recorder *r) {
  const int n = 1 << 20;
  float *d_data = nullptr;
  cudaError_t err = tolerate(r, "cudaMalloc", cudaMalloc((void **)&d_data, n * sizeof(float)));
  if (err != cudaSuccess) return err;
  scaleKernel<<<1, 2048>>>(d_data, n);
  err = tolerate(r, "scaleKernel<<<1, 2048>>>", cudaGetLastError());
  tolerate(r, "cudaDeviceSynchronize", cudaDeviceSynchronize());
  tolerate(r, "cudaFree", cudaFree(d_data));
  return err;
}

// How the second of three model calls fails.
enum class SecondCall { Faults, LaunchRefused };

// What the first call leaves behind: a buffer it never frees, as the
// article's example 1 does, from cudaMalloc or from the stream-ordered pool
// (cudaMallocAsync).
enum class FirstLeak { Malloc, MallocAsync };

const size_t kLeak = 1ull << 30;          // what the first call leaves allocated
const size_t kLeakTolerance = 64ull << 20;  // context bookkeeping, rounding

// The article's example 2 with a reset after each call: a first call that
// raises a setting of the context (the device-heap limit) and leaves a
// buffer allocated, the reset, then a second call that fails, the reset
// again, and a third call. Does each reset give the next call a clean
// context?
static int resetBetweenCalls(const casebook_recorder *r, SecondCall how, FirstLeak leak) {
  size_t defaultHeap = 0, raised = 0, afterReset = 0;
  rec(r, "cudaDeviceGetLimit cudaLimitMallocHeapSize", cudaDeviceGetLimit(&defaultHeap, cudaLimitMallocHeapSize));
  size_t freeBefore = free_bytes(r);
  {
    Iteration it(r, "first model call");
    rec(r, "cudaDeviceSetLimit cudaLimitMallocHeapSize",
        cudaDeviceSetLimit(cudaLimitMallocHeapSize, defaultHeap + (64ull << 20)));
    rec(r, "cudaDeviceGetLimit cudaLimitMallocHeapSize", cudaDeviceGetLimit(&raised, cudaLimitMallocHeapSize));
    runModel(r, false);
    void *left = nullptr;  // never freed
    if (leak == FirstLeak::Malloc) {
      rec(r, "cudaMalloc (left allocated)", cudaMalloc(&left, kLeak));
    } else {
      rec(r, "cudaMallocAsync (left allocated)", cudaMallocAsync(&left, kLeak, 0));
      rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(0));
    }
  }
  rec(r, "cudaDeviceReset", cudaDeviceReset());
  rec(r, "cudaDeviceGetLimit cudaLimitMallocHeapSize", cudaDeviceGetLimit(&afterReset, cudaLimitMallocHeapSize));
  size_t freeAfterReset = free_bytes(r);
  measure(r, names::FREE_BEFORE_THE_FIRST_CALL, (double)freeBefore);
  measure(r, names::FREE_AFTER_THE_FIRST_RESET, (double)freeAfterReset);
  fact(r, names::THE_FIRST_CALL_RAISED_THE_DEVICE_HEAP_LIMIT, raised > defaultHeap);
  fact(r, names::THE_FIRST_RESET_PUT_THE_LIMIT_BACK, afterReset == defaultHeap);
  fact(r, names::THE_FIRST_RESET_GAVE_BACK_THE_FIRST_CALL_S_BUFFER, freeAfterReset + kLeakTolerance >= freeBefore);
  cudaError_t second;
  {
    Iteration it(r, "second model call");
    second = how == SecondCall::Faults ? runModel(r, true) : refusedModel(r);
  }
  fact_text(r, names::SECOND, cudaGetErrorName(second));
  cudaError_t reset = tolerate(r, "cudaDeviceReset", cudaDeviceReset());
  fact_text(r, names::RESET_RETURNS, cudaGetErrorName(reset));
  cudaError_t third;
  {
    Iteration it(r, "third model call");
    third = runModel(r, false);
  }
  fact_text(r, names::THIRD_CALL_RETURNS, cudaGetErrorName(third));
  fact(r, names::AFTER_RESET, third == cudaSuccess);
  return 0;
}

// ANCHOR: reset_between_calls
extern "C" int casebook_sticky_error_reset_between_calls_cpp(const casebook_recorder *r) {
  return resetBetweenCalls(r, SecondCall::Faults, FirstLeak::Malloc);
}
// ANCHOR_END: reset_between_calls

// ANCHOR: reset_after_refused_launch
// A control: the same three calls, the second one's launch refused instead
// of its kernel faulting.
extern "C" int casebook_sticky_error_reset_after_refused_launch_cpp(const casebook_recorder *r) {
  return resetBetweenCalls(r, SecondCall::LaunchRefused, FirstLeak::Malloc);
}
// ANCHOR_END: reset_after_refused_launch

// ANCHOR: reset_after_pool_leak
// A control: the same three calls, the first one's buffer from the
// stream-ordered pool (cudaMallocAsync) instead of cudaMalloc.
extern "C" int casebook_sticky_error_reset_after_pool_leak_cpp(const casebook_recorder *r) {
  return resetBetweenCalls(r, SecondCall::Faults, FirstLeak::MallocAsync);
}
// ANCHOR_END: reset_after_pool_leak
