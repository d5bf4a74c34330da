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

// Copies the buffer's `words` back: did the graph's memsets fill all of them?
static void check_graph_ran(const casebook_recorder *r, const int *d, size_t words = kWords) {
  std::vector<int> host(words, 0);
  rec(r, "cudaMemcpy", cudaMemcpy(host.data(), d, words * sizeof(int), cudaMemcpyDeviceToHost));
  bool all = true;
  for (int v : host) all = all && v == 0x2a2a2a2a;
  check(r, names::GRAPH_RAN, all);
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
  check_graph_ran(r, d);
  rec(r, "cudaGraphExecDestroy", cudaGraphExecDestroy(exec));
  rec(r, "cudaGraphDestroy", cudaGraphDestroy(graph));
  rec(r, "cudaFree (scratch)", cudaFree(scratch));
  later_call(r);
  rec(r, "cudaFree", cudaFree(d));
  rec(r, "cudaStreamDestroy", cudaStreamDestroy(s));
  return 0;
}

// The second half: a buffer's tracking event (the event a wrapper records
// after each use of the buffer, as cudarc's safe API does) is recorded
// during the capture and waited on by the buffer's teardown after the graph
// is gone. A destructor cannot return the wait's error, so it stays the
// thread's last error, and the next check reports it.

__global__ void casebook_graph_touch(int *p) { *p = 1; }

// Fills the buffer in a capture; `track_in_capture` says whether the
// tracking event is recorded inside it too. Runs and destroys the graph,
// then does the buffer's teardown and an unrelated launch with its check.
static void tracked_buffer(const casebook_recorder *r, bool track_in_capture) {
  cudaStream_t s;
  rec(r, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int *d = nullptr, *other = nullptr;
  rec(r, "cudaMalloc", cudaMalloc((void **)&d, kWords * sizeof(int)));
  rec(r, "cudaMalloc (another buffer)", cudaMalloc((void **)&other, sizeof(int)));
  cudaEvent_t tracking;
  rec(r, "cudaEventCreateWithFlags", cudaEventCreateWithFlags(&tracking, cudaEventDisableTiming));
  // ANCHOR: captured_event
  // ANCHOR: event_outside_capture
  rec(r, "cudaEventRecord (tracking, after the allocation)", cudaEventRecord(tracking, s));
  rec(r, "cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  rec(r, "cudaMemsetAsync (captured)", cudaMemsetAsync(d, 0x2a, kWords * sizeof(int), s));
  if (track_in_capture) {
    // BUG (broken): the event now stands for a node of the graph.
    rec(r, "cudaEventRecord (tracking, during capture)", cudaEventRecord(tracking, s));
    fact_text(r, names::TRACKING_EVENT, "recorded during the capture");
  } else {
    // FIX: a use inside a capture leaves the tracking event alone.
    fact_text(r, names::TRACKING_EVENT, "not recorded while the stream captured");
  }
  cudaGraph_t graph = end_capture(r, s);
  cudaGraphExec_t exec = nullptr;
  rec(r, "cudaGraphInstantiate", cudaGraphInstantiate(&exec, graph, 0));
  rec(r, "cudaGraphLaunch", cudaGraphLaunch(exec, s));
  rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(s));
  rec(r, "cudaGraphExecDestroy", cudaGraphExecDestroy(exec));
  rec(r, "cudaGraphDestroy", cudaGraphDestroy(graph));
  // The buffer's teardown, in a destructor: its result goes unchecked.
  cudaError_t waited = rec(r, "cudaStreamWaitEvent (teardown)", cudaStreamWaitEvent(s, tracking, 0));
  fact_text(r, names::TEARDOWN_WAIT, cudaGetErrorName(waited));
  // Later, unrelated work, checked the usual way.
  casebook_graph_touch<<<1, 1, 0, s>>>(other);
  cudaError_t last = rec(r, "cudaGetLastError (after an unrelated launch)", cudaGetLastError());
  fact_text(r, names::LAST_ERROR, cudaGetErrorName(last));
  // ANCHOR_END: event_outside_capture
  // ANCHOR_END: captured_event
  rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(s));
  check_graph_ran(r, d);
  rec(r, "cudaEventDestroy", cudaEventDestroy(tracking));
  rec(r, "cudaFree (another buffer)", cudaFree(other));
  rec(r, "cudaFree", cudaFree(d));
  rec(r, "cudaStreamDestroy", cudaStreamDestroy(s));
}

extern "C" int casebook_graph_capture_misuse_captured_event_cpp(const casebook_recorder *r) {
  tracked_buffer(r, /*track_in_capture=*/true);
  return 0;
}

extern "C" int casebook_graph_capture_misuse_event_outside_capture_cpp(const casebook_recorder *r) {
  tracked_buffer(r, /*track_in_capture=*/false);
  return 0;
}

// A fork inside the capture: a second stream joins it by waiting on an
// event recorded in the capturing stream, and its work becomes a branch of
// the graph. The branch must be joined back (the origin stream waits on an
// event recorded after it) before the capture ends; `join` says whether it is.
static void forked_capture(const casebook_recorder *r, bool join) {
  cudaStream_t s, side;
  rec(r, "cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  rec(r, "cudaStreamCreateWithFlags (side stream)", cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t forked, joined;
  rec(r, "cudaEventCreateWithFlags (fork)", cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
  rec(r, "cudaEventCreateWithFlags (join)", cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
  int *d = nullptr;
  rec(r, "cudaMalloc", cudaMalloc((void **)&d, 2 * kWords * sizeof(int)));
  // ANCHOR: unjoined_fork
  // ANCHOR: joined_fork
  rec(r, "cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  rec(r, "cudaMemsetAsync (captured)", cudaMemsetAsync(d, 0x2a, kWords * sizeof(int), s));
  rec(r, "cudaEventRecord (fork, in the capture)", cudaEventRecord(forked, s));
  rec(r, "cudaStreamWaitEvent (the side stream joins the capture)", cudaStreamWaitEvent(side, forked, 0));
  rec(r, "cudaMemsetAsync (captured, side stream)",
      cudaMemsetAsync(d + kWords, 0x2a, kWords * sizeof(int), side));
  if (join) {
    // FIX: the side stream's branch is joined back before the capture ends.
    rec(r, "cudaEventRecord (join, on the side stream)", cudaEventRecord(joined, side));
    rec(r, "cudaStreamWaitEvent (the origin waits on the branch)", cudaStreamWaitEvent(s, joined, 0));
  }
  // BUG (unjoined): without the join, the capture ends with the branch open.
  cudaGraph_t graph = end_capture(r, s);
  // ANCHOR_END: joined_fork
  // ANCHOR_END: unjoined_fork
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (rec(r, "cudaStreamIsCapturing (side stream)", cudaStreamIsCapturing(side, &status)) == cudaSuccess)
    fact_text(r, names::SIDE_STREAM_AFTER,
              status == cudaStreamCaptureStatusNone ? "out of capture mode" : "still capturing");
  if (graph != nullptr) {
    cudaGraphExec_t exec = nullptr;
    rec(r, "cudaGraphInstantiate", cudaGraphInstantiate(&exec, graph, 0));
    rec(r, "cudaGraphLaunch", cudaGraphLaunch(exec, s));
    rec(r, "cudaStreamSynchronize", cudaStreamSynchronize(s));
    check_graph_ran(r, d, 2 * kWords);
    rec(r, "cudaGraphExecDestroy", cudaGraphExecDestroy(exec));
    rec(r, "cudaGraphDestroy", cudaGraphDestroy(graph));
  }
  later_call(r);
  rec(r, "cudaEventDestroy (join)", cudaEventDestroy(joined));
  rec(r, "cudaEventDestroy (fork)", cudaEventDestroy(forked));
  rec(r, "cudaFree", cudaFree(d));
  rec(r, "cudaStreamDestroy (side stream)", cudaStreamDestroy(side));
  rec(r, "cudaStreamDestroy", cudaStreamDestroy(s));
}

extern "C" int casebook_graph_capture_misuse_unjoined_fork_cpp(const casebook_recorder *r) {
  forked_capture(r, /*join=*/false);
  return 0;
}

extern "C" int casebook_graph_capture_misuse_joined_fork_cpp(const casebook_recorder *r) {
  forked_capture(r, /*join=*/true);
  return 0;
}
