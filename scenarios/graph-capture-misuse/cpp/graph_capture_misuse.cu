// graph-capture-misuse, C++: the same capture through the runtime API. The
// broken variant allocates with cudaMalloc while the stream is capturing.

#include "casebook.h"
#include "names.h"

#include <vector>

using namespace casebook;

static const int kWords = 1 << 20;

// Ends the capture; records what it returns, whether it gives a graph, and
// whether the stream is still capturing afterwards.
static cudaGraph_t end_capture(const casebook_recorder *r, cudaStream_t s) {
  cudaGraph_t graph = nullptr;
  cudaError_t err = rec(r, "cudaStreamEndCapture", cudaStreamEndCapture(s, &graph));
  fact_text(r, names::END_CAPTURE, cudaGetErrorName(err));
  fact_text(r, names::GRAPH, graph == nullptr ? "none" : "a graph");
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (rec(r, "cudaStreamIsCapturing", cudaStreamIsCapturing(s, &status)) == cudaSuccess)
    fact_text(r, names::STREAM_AFTER, status == cudaStreamCaptureStatusNone ? "out of capture mode" : "still capturing");
  return err == cudaSuccess ? graph : nullptr;
}

static void later_call(const casebook_recorder *r) {
  void *p = nullptr;
  cudaError_t err = rec(r, "later call: cudaMalloc", cudaMalloc(&p, 1 << 20));
  if (err == cudaSuccess) err = rec(r, "later call: cudaFree", cudaFree(p));
  fact_text(r, names::LATER_CALL, err == cudaSuccess ? "works" : "fails");
}

// ANCHOR: broken
extern "C" int casebook_graph_capture_misuse_broken_cpp(const casebook_recorder *r) {
  cudaStream_t s;
  rec(r, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int *d = nullptr, *scratch = nullptr;
  rec(r, "cudaMalloc", cudaMalloc((void **)&d, kWords * sizeof(int)));
  rec(r, "cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  rec(r, "cudaMemsetAsync (captured)", cudaMemsetAsync(d, 0x2a, kWords * sizeof(int), s));
  // BUG: a synchronous allocation while the stream is capturing.
  cudaError_t err = rec(r, "cudaMalloc (during capture)", cudaMalloc((void **)&scratch, kWords * sizeof(int)));
  end_capture(r, s);
  // ANCHOR_END: broken
  if (err == cudaSuccess) rec(r, "cudaFree (scratch)", cudaFree(scratch));
  later_call(r);
  rec(r, "cudaFree", cudaFree(d));
  rec(r, "cudaStreamDestroy", cudaStreamDestroy(s));
  return 0;
}

// ANCHOR: fixed
extern "C" int casebook_graph_capture_misuse_fixed_cpp(const casebook_recorder *r) {
  cudaStream_t s;
  rec(r, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int *d = nullptr, *scratch = nullptr;
  rec(r, "cudaMalloc", cudaMalloc((void **)&d, kWords * sizeof(int)));
  // FIX: everything that cannot be captured happens before the capture.
  rec(r, "cudaMalloc (before capture)", cudaMalloc((void **)&scratch, kWords * sizeof(int)));
  rec(r, "cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  rec(r, "cudaMemsetAsync (captured)", cudaMemsetAsync(d, 0x2a, kWords * sizeof(int), s));
  cudaGraph_t graph = end_capture(r, s);
  cudaGraphExec_t exec = nullptr;
  rec(r, "cudaGraphInstantiate", cudaGraphInstantiate(&exec, graph, 0));
  rec(r, "cudaGraphLaunch", cudaGraphLaunch(exec, s));
  rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(s));  // after the capture: allowed
  // ANCHOR_END: fixed
  std::vector<int> host(kWords, 0);
  rec(r, "cudaMemcpy", cudaMemcpy(host.data(), d, kWords * sizeof(int), cudaMemcpyDeviceToHost));
  bool all = true;
  for (int v : host) all = all && v == 0x2a2a2a2a;
  check(r, names::GRAPH_RAN, all);
  rec(r, "cudaGraphExecDestroy", cudaGraphExecDestroy(exec));
  rec(r, "cudaGraphDestroy", cudaGraphDestroy(graph));
  rec(r, "cudaFree (scratch)", cudaFree(scratch));
  later_call(r);
  rec(r, "cudaFree", cudaFree(d));
  rec(r, "cudaStreamDestroy", cudaStreamDestroy(s));
  return 0;
}
