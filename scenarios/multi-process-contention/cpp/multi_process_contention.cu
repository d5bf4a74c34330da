// multi-process-contention, C++: the same two processes through the runtime
// API. The parent forks both before it touches CUDA (it never does) and
// acts as their barrier over pipes: both read the free memory before either
// allocates, and both try before either frees.

#include "casebook.h"
#include "names.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

using namespace casebook;

static const int kWorkers = 2;
// Each wait for a worker; the three stages stay within the variant's
// two-minute limit even if both workers hang.
static const int kDeadlineMs = 20 * 1000;
static const size_t kPage = 2u << 20;

// What a worker sends its parent, once per stage.
struct Read {
  int err;
  size_t free, total;
};
struct Tried {
  int err;
  size_t planned;
};
struct Freed {
  int err;
};

struct Worker {
  pid_t pid = -1;
  int from = -1, to = -1;  // report pipe (read end), go pipe (write end)
  Read read = {-1, 0, 0};
  Tried tried = {-1, 0};
  Freed freed = {-1};
  bool got_read = false, got_tried = false, got_freed = false;
  bool killed = false;
};

static bool receive(int fd, void *what, size_t size) {
  struct pollfd p = {fd, POLLIN, 0};
  return poll(&p, 1, kDeadlineMs) > 0 && read(fd, what, size) == (ssize_t)size;
}

static bool wait_go(int fd) {
  char go = 0;
  return receive(fd, &go, 1);
}

// A worker that has ended closed its end: the write fails with EPIPE
// rather than raising SIGPIPE, which the Rust runtime of this process
// ignores.
static void go(int fd) {
  char one = 1;
  ssize_t ignored = write(fd, &one, 1);
  (void)ignored;
}

// The worker: reads the free memory, waits, allocates what `plan` says,
// waits, frees. Each stage's result goes to the parent.
static void work(int to_parent, int from_parent, size_t (*plan)(size_t)) {
  Read r = {0, 0, 0};
  r.err = cudaMemGetInfo(&r.free, &r.total);
  ssize_t ignored = write(to_parent, &r, sizeof r);
  if (r.err != cudaSuccess || !wait_go(from_parent)) return;
  Tried t = {0, plan(r.free) / kPage * kPage};
  void *p = nullptr;
  t.err = cudaMalloc(&p, t.planned);
  ignored = write(to_parent, &t, sizeof t);
  if (!wait_go(from_parent)) return;
  if (t.err == cudaSuccess) {
    Freed f = {cudaFree(p)};
    ignored = write(to_parent, &f, sizeof f);
  }
  (void)ignored;
}

static void measure_named(const casebook_recorder *r, int process, const char *key, double value) {
  char name[96];
  std::snprintf(name, sizeof name, "process %d %s", process, key);
  r->measure(r->ctx, name, value, Bytes);
}

static void fact_named(const casebook_recorder *r, int process, const char *key, const char *json) {
  char name[128];
  std::snprintf(name, sizeof name, "process %d: %s", process, key);
  r->fact(r->ctx, name, json);
}

static int contend(const casebook_recorder *r, size_t (*plan)(size_t)) {
  Worker w[kWorkers];
  for (int i = 0; i < kWorkers; ++i) {
    int up[2], down[2];
    if (pipe(up) != 0 || pipe(down) != 0) return 1;
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      close(up[0]);
      close(down[1]);
      work(up[1], down[0], plan);
      _exit(0);
    }
    close(up[1]);
    close(down[0]);
    w[i].pid = pid;
    w[i].from = up[0];
    w[i].to = down[1];
  }
  // The barrier: every worker has read the free memory, then every worker
  // has tried its allocation.
  for (Worker &x : w) x.got_read = receive(x.from, &x.read, sizeof x.read);
  for (Worker &x : w) go(x.to);
  for (Worker &x : w) x.got_tried = x.got_read && x.read.err == cudaSuccess && receive(x.from, &x.tried, sizeof x.tried);
  for (Worker &x : w) go(x.to);
  for (Worker &x : w)
    x.got_freed = x.got_tried && x.tried.err == cudaSuccess && receive(x.from, &x.freed, sizeof x.freed);
  // Each worker exits once it has reported; one still running after the
  // deadline has hung and is killed.
  for (Worker &x : w) {
    int status = 0;
    for (int waited = 0; waitpid(x.pid, &status, WNOHANG) == 0; waited += 10) {
      if (waited >= kDeadlineMs) {
        kill(x.pid, SIGKILL);
        waitpid(x.pid, &status, 0);
        x.killed = true;
        break;
      }
      usleep(10 * 1000);
    }
    close(x.from);
    close(x.to);
  }
  // Those whose allocation succeeded first, so which one won does not show.
  std::stable_sort(w, w + kWorkers, [](const Worker &a, const Worker &b) {
    return (a.got_tried && a.tried.err == cudaSuccess) > (b.got_tried && b.tried.err == cudaSuccess);
  });
  int completed = 0;
  for (int i = 0; i < kWorkers; ++i) {
    const Worker &x = w[i];
    char label[32];
    std::snprintf(label, sizeof label, "process %d", i + 1);
    bool allocated = x.got_tried && x.tried.err == cudaSuccess;
    bool clean = allocated && x.got_freed && x.freed.err == cudaSuccess;
    {
      Iteration it(r, label);
      if (x.got_read) tolerate(r, "cudaMemGetInfo", (cudaError_t)x.read.err);
      if (x.got_tried) tolerate(r, "cudaMalloc (planned from free memory)", (cudaError_t)x.tried.err);
      if (x.got_freed) tolerate(r, "cudaFree", (cudaError_t)x.freed.err);
    }
    fact_named(r, i + 1, names::ALLOCATED.text, allocated ? "true" : "false");
    fact_named(r, i + 1, "ended",
               x.killed          ? "\"hung: killed\""
               : !x.got_read     ? "\"did not report\""
               : clean           ? "\"completed\""
                                 : "\"returned an error\"");
    if (x.got_read && x.read.err == cudaSuccess) {
      measure_named(r, i + 1, names::FREE_SEEN_AT_START.text, (double)x.read.free);
      measure_named(r, i + 1, names::TOTAL.text, (double)x.read.total);
      measure_named(r, i + 1, names::USED_WHEN_STARTED.text, (double)(x.read.total - x.read.free));
    }
    if (x.got_tried) measure_named(r, i + 1, names::PLANNED_BYTES.text, (double)x.tried.planned);
    completed += clean ? 1 : 0;
  }
  measure(r, names::PROCESSES_COMPLETED, completed);
  check(r, names::BOTH, completed == kWorkers);
  return 0;
}

// ANCHOR: broken
static size_t plan_broken(size_t free_seen) {
  return free_seen / 10 * 9;  // BUG: the other process saw the same free memory
}
// ANCHOR_END: broken

// ANCHOR: fixed
static size_t plan_fixed(size_t free_seen) {
  return free_seen / 10 * 9 / kWorkers;  // FIX: a budget per process, from a shared plan
}
// ANCHOR_END: fixed

extern "C" int casebook_multi_process_contention_broken_cpp(const casebook_recorder *r) {
  return contend(r, plan_broken);
}

extern "C" int casebook_multi_process_contention_fixed_cpp(const casebook_recorder *r) {
  return contend(r, plan_fixed);
}
