// fork-after-init, C++: the same worker through the runtime API. The forked
// child does a small job (fill a buffer, read it back, add it up) and sends
// each call's result to its parent over a pipe; the parent records them and
// waits for the child with a deadline.

#include "casebook.h"
#include "names.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

using namespace casebook;

static const int kWords = 1024;
static const int kDeadlineSeconds = 30;

// What the worker sends: each call's result, in order, and the sum.
struct WorkerReport {
  int results[4];
  int calls;
  long long sum;
};
static const char *kCalls[4] = {"worker: cudaMalloc", "worker: cudaMemset", "worker: cudaMemcpy", "worker: cudaFree"};

static void worker_job(int fd) {
  WorkerReport w = {{0, 0, 0, 0}, 0, -1};
  int *d = nullptr;
  std::vector<int> host(kWords, 0);
  cudaError_t err = cudaMalloc((void **)&d, kWords * sizeof(int));
  w.results[w.calls++] = err;
  if (err == cudaSuccess) w.results[w.calls++] = err = cudaMemset(d, 1, kWords * sizeof(int));
  if (err == cudaSuccess)
    w.results[w.calls++] = err = cudaMemcpy(host.data(), d, kWords * sizeof(int), cudaMemcpyDeviceToHost);
  if (err == cudaSuccess) w.results[w.calls++] = err = cudaFree(d);
  if (err == cudaSuccess) {
    w.sum = 0;
    for (int v : host) w.sum += v;
  }
  ssize_t ignored = write(fd, &w, sizeof w);
  (void)ignored;
}

// Forks; the child runs worker_job and _exits. The parent records the
// worker's calls, how it ended, and whether its sum is right.
static int fork_worker(const casebook_recorder *r) {
  int fds[2];
  if (pipe(fds) != 0) return 1;
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    close(fds[0]);
    worker_job(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  rec(r, "fork", cudaSuccess);
  WorkerReport w = {{0, 0, 0, 0}, 0, -1};
  bool got = false;
  struct pollfd p = {fds[0], POLLIN, 0};
  if (poll(&p, 1, kDeadlineSeconds * 1000) > 0 && read(fds[0], &w, sizeof w) == (ssize_t)sizeof w) got = true;
  close(fds[0]);
  const char *ended = "ended";
  char text[64];
  int status = 0;
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      if (WIFEXITED(status)) {
        std::snprintf(text, sizeof text, "exited with status %d", WEXITSTATUS(status));
      } else if (WIFSIGNALED(status)) {
        std::snprintf(text, sizeof text, "killed by signal %d", WTERMSIG(status));
      } else {
        std::snprintf(text, sizeof text, "%s", ended);
      }
      break;
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(kDeadlineSeconds)) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      std::snprintf(text, sizeof text, "hung: killed after %d s", kDeadlineSeconds);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (got)
    for (int i = 0; i < w.calls && i < 4; ++i) rec(r, kCalls[i], (cudaError_t)w.results[i]);
  fact_text(r, names::WORKER_ENDED, text);
  check(r, names::WORKER_COMPUTED, got && w.sum == (long long)kWords * 0x01010101LL);
  return 0;
}

// An allocation of 1 MiB and its free, in the parent.
static cudaError_t parent_call(const casebook_recorder *r, const char *malloc_label, const char *free_label) {
  void *p = nullptr;
  cudaError_t err = rec(r, malloc_label, cudaMalloc(&p, 1 << 20));
  if (err == cudaSuccess) err = rec(r, free_label, cudaFree(p));
  return err;
}

// ANCHOR: broken
extern "C" int casebook_fork_after_init_broken_cpp(const casebook_recorder *r) {
  parent_call(r, "parent: cudaMalloc", "parent: cudaFree");  // the parent starts CUDA…
  fork_worker(r);  // BUG: …then forks: the worker is a copy without a usable CUDA
  // ANCHOR_END: broken
  cudaError_t after = parent_call(r, "parent after the fork: cudaMalloc", "parent after the fork: cudaFree");
  fact_text(r, names::PARENT_AFTER, after == cudaSuccess ? "works" : "fails");
  return 0;
}

// ANCHOR: fixed
extern "C" int casebook_fork_after_init_fixed_cpp(const casebook_recorder *r) {
  fork_worker(r);  // FIX: fork before this process touches CUDA
  cudaError_t after = parent_call(r, "parent after the fork: cudaMalloc", "parent after the fork: cudaFree");
  // ANCHOR_END: fixed
  fact_text(r, names::PARENT_AFTER, after == cudaSuccess ? "works" : "fails");
  return 0;
}
