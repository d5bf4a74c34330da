//! `graph-capture-misuse`: work is recorded into a CUDA graph by stream
//! capture, and a call that cannot be recorded (a synchronisation, a
//! synchronous allocation) is made while the stream is capturing. The call
//! returns "operation not permitted when stream is capturing", the capture
//! is invalidated, and ending it returns "operation failed due to a
//! previous error during capture" and no graph. The fix makes only calls
//! that can be captured inside the capture, and the rest before or after.
//!
//! The second half is cudarc#590: a buffer's tracking event, recorded
//! during a capture, stands for a node of the graph, and the buffer's
//! teardown waits on it after the graph is destroyed: "invalid argument",
//! from a call that looks harmless, or from a later one that checks.

use casebook_driver::ResultName;
use casebook_driver::device::event;
use casebook_driver::prelude::*;
use casebook_model::cuda_errors::{driver, runtime};
use std::sync::Arc;

use cudarc::driver::{CudaStream, DriverError, result, sys};

mod broken;
mod captured_event;
mod event_outside_capture;
mod external_wait;
mod fixed;
mod safe_api;
mod status_calls;

casebook_model::case_modules!();

const TRACKING_OFF_SAFE: &str = "With event tracking off, a buffer used inside a capture and \
                                 dropped after its graph leaves no error behind (cudarc#590, \
                                 fixed by cudarc#591).";
const TRACKING_ON_CAPTURES: &str = "With its default event tracking, a buffer written before a \
                                    capture can be used inside it.";

fn parked_text(o: &Outcome) -> String {
    match o.fact_text(PARKED_ERROR) {
        Some("none") => "no error parked after the drops".to_owned(),
        Some(e) => format!("{e} parked by the drops"),
        None => "the drops were not reached".to_owned(),
    }
}

fn graph_text(o: &Outcome) -> String {
    match o.fact_text(GRAPH) {
        Some("a graph") => "the capture gave a graph".to_owned(),
        _ => format!("the capture gave no graph: {}", o.first_error_text()),
    }
}

/// The captured work fills this many 32-bit words with [`PATTERN`].
pub const WORDS: usize = 1 << 20;
pub const PATTERN: u32 = 0x2a2a_2a2a;

casebook_model::scenario!(Scenario {
    title: "CUDA error: operation not permitted when stream is capturing",
    cause: "During stream capture the work enqueued on the stream is recorded, not run, so \
            a call that waits for it (a stream or device synchronisation) or that cannot be \
            recorded (cudaMalloc, a synchronous copy) is refused, and the capture is \
            invalidated: ending it returns an error and no graph. Make such calls before \
            the capture begins or after it ends. A stream forked into the capture (it \
            waits on an event recorded there) must be joined back before the capture ends, \
            or ending it returns \"capturing stream has unjoined work\" and no graph. Events \
            follow the same rule: one recorded \
            during a capture stands for a node of the graph, and once the graph is \
            destroyed a stream that is not capturing gets CUDA_ERROR_INVALID_VALUE when \
            it waits on it; a capturing stream cannot wait on one recorded outside it. A wrapper that records a buffer's uses with events must leave \
            them alone while a stream captures.",
    fix: "Between cudaStreamBeginCapture and EndCapture enqueue only capturable async work: \
          cudaMalloc before the capture, cudaStreamSynchronize after cudaGraphLaunch, and no event \
          records while cudaStreamIsCapturing reports capturing; a side stream forked into the \
          capture ends with an event the origin stream waits on.",
    symptoms: &[
        "operation not permitted when stream is capturing",
        "an error on the second call",
        "invalid argument from a call that did nothing wrong",
    ],
    requires: Requirement::GPU,
    reports: REPORTS,
    variants: variants![
        cudarc_pair!(Symptom::cuda_error(driver::STREAM_CAPTURE_UNSUPPORTED))
            .then_shows(Symptom::cuda_error(driver::STREAM_CAPTURE_INVALIDATED)),
        cpp_pair!(Symptom::cuda_error(runtime::STREAM_CAPTURE_UNSUPPORTED))
            .then_shows(Symptom::cuda_error(runtime::STREAM_CAPTURE_INVALIDATED)),
        Variant::broken(
            "unjoined-fork-cpp",
            Symptom::cuda_error(runtime::STREAM_CAPTURE_UNJOINED),
            cpp::unjoined_fork,
        ),
        Variant::fixed("joined-fork-cpp", cpp::joined_fork),
        Variant::broken(
            "captured-event",
            Symptom::cuda_error(driver::INVALID_VALUE),
            cudarc!(captured_event),
        ),
        Variant::fixed("event-outside-capture", cudarc!(event_outside_capture)),
        Variant::contrast_clean("safe-api", cudarc!(safe_api))
            .also_differs(
                "cudarc's safe API instead of driver calls, with event tracking turned off \
                 before the capture, as cudarc's maintainer advises (cudarc#501).",
            )
            .states(
                TRACKING_OFF_SAFE,
                |o| { o.fact_text(PARKED_ERROR).map(|v| v == "none") },
                parked_text,
            ),
        Variant::contrast(
            "safe-api-tracked",
            Expect::Fails(Symptom::cuda_error(driver::STREAM_CAPTURE_INVALIDATED)),
            cudarc!(safe_api::tracked, anchored),
        )
        .then_shows(Symptom::cuda_error(driver::STREAM_CAPTURE_ISOLATION))
        .also_differs(
            "safe-api's program with cudarc's default: the context tracks every use of the \
             buffer with events, including the uses inside the capture.",
        )
        .states(
            TRACKING_ON_CAPTURES,
            |o| { o.fact_text(GRAPH).map(|v| v == "a graph") },
            graph_text,
        ),
        Variant::records(
            "wait-default",
            cudarc!(external_wait::default at "wait_in_capture")
        ),
        Variant::records(
            "wait-external",
            cudarc!(external_wait::external at "wait_in_capture")
        )
        .one_change(
            "wait-default",
            "the flag of the wait inside the capture: none there, CU_EVENT_WAIT_EXTERNAL here",
            "wait_in_capture(rec, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)",
            "wait_in_capture(rec, sys::CUevent_wait_flags::CU_EVENT_WAIT_EXTERNAL)",
        ),
        // The four calls the Guide names, each inside a capture of its
        // own; its control enqueues the same work uncaptured.
        Variant::records(
            "status-calls",
            cudarc!(status_calls::captured at "status_calls")
        ),
        Variant::records(
            "status-calls-uncaptured",
            cudarc!(status_calls::uncaptured at "status_calls")
        )
        .one_change(
            "status-calls",
            "whether the work is captured: into a graph there, enqueued to run here",
            "status_calls(rec, Capture::On)",
            "status_calls(rec, Capture::Off)",
        ),
        Variant::broken(
            "captured-event-cpp",
            Symptom::cuda_error(runtime::INVALID_VALUE),
            cpp::captured_event,
        ),
        Variant::fixed("event-outside-capture-cpp", cpp::event_outside_capture),
    ],
});

const REPORTS: &[Report] = &[
    Report {
        id: "microsoft/onnxruntime#15002",
        shows: "\"CUDA failure 900: operation not permitted when stream is capturing\": during CUDA \
                graph capture ONNX Runtime called cudaStreamSynchronize, which capture does not \
                allow.",
    },
    Report {
        id: "microsoft/onnxruntime#15005",
        shows: "the fix of the same failure from its other cause: \"cudamalloc is not allowed \
                during graph capture\".",
    },
    Report {
        id: "grgalex/nvshare#28",
        shows: "a context-wide synchronisation during capture: `cuCtxSynchronize returned \
                CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: operation not permitted when stream is \
                capturing`.",
    },
    Report {
        id: "JuliaGPU/CUDA.jl#2691",
        shows: "the cascade: `operation failed due to a previous error during capture (code 901, \
                ERROR_STREAM_CAPTURE_INVALIDATED)`, caused by `operation not permitted when stream \
                is capturing (code 900, ERROR_STREAM_CAPTURE_UNSUPPORTED)`.",
    },
    Report {
        id: "chelsea0x3b/cudarc#590",
        shows: "a `CudaSlice` used inside a capture gets its event recorded as a node of the \
                graph; dropped after the graph is destroyed, its `Drop` waits on that captured \
                event, which fails with `CUDA_ERROR_INVALID_VALUE`; the error is parked in the \
                context and returned by a later, unrelated call.",
    },
    Report {
        id: "chelsea0x3b/cudarc#591",
        shows: "the fix of #590: `SyncOnDrop`'s record and `CudaSlice`'s waits on drop are \
                skipped when the context is not managing stream synchronisation.",
    },
    Report {
        id: "NVIDIA/cuopt#1758",
        shows: "one `cudaErrorStreamCaptureUnsupported` inside a capture region showed in CI as a \
                cascade of `cudaErrorStreamCaptureInvalidated` errors from unrelated call sites.",
    },
];

static PROHIBITED: Passage = Passage {
    document: "CUDA Programming Guide",
    section: "CUDA Graphs: Stream Capture: Prohibited and Unhandled Operations",
    url: "https://docs.nvidia.com/cuda/cuda-programming-guide/04-special-topics/cuda-graphs.html",
    text: "It is invalid to synchronize or query the execution status of a stream which is being \
           captured or a captured event, because they do not represent items scheduled for \
           execution. It is also invalid to query the execution status of or synchronize a \
           broader handle which encompasses an active stream capture, such as a device or context \
           handle when any associated stream is in capture mode.",
};

static INVALIDATION: Passage = Passage {
    document: "CUDA Programming Guide",
    section: "CUDA Graphs: Stream Capture: Invalidation",
    url: "https://docs.nvidia.com/cuda/cuda-programming-guide/04-special-topics/cuda-graphs.html",
    text: "When an invalid operation is attempted during stream capture, any associated capture \
           graphs are invalidated. When a capture graph is invalidated, further use of any streams \
           which are being captured or captured events associated with the graph is invalid and \
           will return an error, until stream capture is ended with cudaStreamEndCapture(). This \
           call will take the associated streams out of capture mode, but will also return an \
           error value and a NULL graph.",
};

static NON_CAPTURED_WAIT: Passage = Passage {
    document: "CUDA Programming Guide",
    section: "CUDA Graphs: Stream Capture: Prohibited and Unhandled Operations",
    url: "https://docs.nvidia.com/cuda/cuda-programming-guide/04-special-topics/cuda-graphs.html",
    text: "It is invalid to merge two separate capture graphs by waiting on a captured event from \
           a stream which is being captured and is associated with a different capture graph \
           than the event. It is invalid to wait on a non-captured event from a stream which is \
           being captured without specifying the `cudaEventWaitExternal` flag.",
};

static GENERAL_RULE: Passage = Passage {
    document: "CUDA Programming Guide",
    section: "CUDA Graphs: Stream Capture: Prohibited and Unhandled Operations",
    url: "https://docs.nvidia.com/cuda/cuda-programming-guide/04-special-topics/cuda-graphs.html",
    text: "As a general rule, when a dependency relation would connect something that is \
           captured with something that was not captured and instead enqueued for execution, \
           CUDA prefers to return an error rather than ignore the dependency. An exception is \
           made for placing a stream into or out of capture mode; this severs a dependency \
           relation between items added to the stream immediately before and after the mode \
           transition.",
};

/// Ends the capture on `stream` with cuStreamEndCapture itself, to see both
/// what it returns and whether it hands back a graph; records both, and
/// whether the stream is still capturing afterwards.
pub(crate) fn end_capture(
    rec: &mut Recorder,
    stream: sys::CUstream,
) -> Result<sys::CUgraph, DriverError> {
    let mut graph: sys::CUgraph = std::ptr::null_mut();
    // SAFETY: a live stream and an out-pointer to a local.
    let ended = unsafe { sys::cuStreamEndCapture(stream, &mut graph) }.result();
    let name = match &ended {
        Ok(()) => DriverError::SUCCESS.to_owned(),
        Err(e) => e.result_name(),
    };
    let ended = rec.step("cuStreamEndCapture", ended);
    rec.fact(END_CAPTURE, name);
    rec.fact(GRAPH, if graph.is_null() { "none" } else { "a graph" });
    // SAFETY: as above.
    let status = rec.step("cuStreamIsCapturing", unsafe {
        result::stream::is_capturing(stream)
    });
    if let Ok(status) = status {
        record_stream_after(rec, status);
    }
    ended.map(|()| graph)
}

/// Records whether the stream is out of capture mode after the capture.
pub(crate) fn record_stream_after(rec: &mut Recorder, status: sys::CUstreamCaptureStatus) {
    rec.fact(
        STREAM_AFTER,
        if status == sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
            "out of capture mode"
        } else {
            "still capturing"
        },
    );
}

/// An unrelated allocation after the capture, and whether it works.
pub(crate) fn later_call(rec: &mut Recorder) {
    let later = device::unrelated_call(rec, "later call");
    rec.fact(LATER_CALL, if later.is_ok() { "works" } else { "fails" });
}

/// The capture's work: fill the buffer with the pattern on `stream`.
pub(crate) fn captured_fill(
    rec: &mut Recorder,
    buf: sys::CUdeviceptr,
    stream: sys::CUstream,
) -> Result<(), DriverError> {
    rec.step("cuMemsetD32Async (captured)", unsafe {
        // SAFETY: the buffer holds WORDS words; the stream is live.
        sys::cuMemsetD32Async(buf, PATTERN, WORDS, stream).result()
    })
}

pub(crate) fn begin_capture(rec: &mut Recorder, stream: sys::CUstream) -> Result<(), DriverError> {
    rec.step("cuStreamBeginCapture", unsafe {
        // SAFETY: a live stream, not capturing yet.
        result::stream::begin_capture(
            stream,
            sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL,
        )
    })
}

/// What both tracking variants start with: a stream, a buffer, and the
/// buffer's tracking event, recorded after the allocation.
pub(crate) fn tracked_buffer(
    rec: &mut Recorder,
) -> anyhow::Result<(Arc<CudaStream>, sys::CUdeviceptr, sys::CUevent)> {
    let ctx = device::context(rec)?;
    let stream = rec.step("cuStreamCreate", ctx.new_stream())?;
    // SAFETY: freed by the caller, after the teardown's wait; only this
    // stream uses it.
    let buf = rec.step("cuMemAlloc", unsafe { result::malloc_sync(WORDS * 4) })?;
    let tracking = event::create(rec)?; // the buffer's "last use" event
    let s = stream.cu_stream();
    // SAFETY: the event and the stream were made just above.
    unsafe {
        event::record(
            rec,
            "cuEventRecord (tracking, after the allocation)",
            tracking,
            s,
        )?;
    }
    Ok((stream, buf, tracking))
}

/// What a buffer's teardown does first: the stream waits for the buffer's
/// last use, as its tracking event marks it. Records what the wait
/// returned.
pub(crate) fn teardown_wait(
    rec: &mut Recorder,
    event: sys::CUevent,
    stream: sys::CUstream,
) -> Result<(), DriverError> {
    // SAFETY: a live stream and a live event.
    let waited = unsafe {
        sys::cuStreamWaitEvent(
            stream,
            event,
            sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT as u32,
        )
        .result()
    };
    rec.fact(
        TEARDOWN_WAIT,
        match &waited {
            Ok(()) => DriverError::SUCCESS.to_owned(),
            Err(e) => e.result_name(),
        },
    );
    rec.step("cuStreamWaitEvent (teardown)", waited)
}

/// Instantiates `graph`, launches it on `stream`, waits for it, and
/// destroys the instance and the graph.
pub(crate) fn launch_graph(
    rec: &mut Recorder,
    graph: sys::CUgraph,
    stream: sys::CUstream,
) -> Result<(), DriverError> {
    // SAFETY: a graph just captured, destroyed here once it has run.
    unsafe {
        let exec = rec.step(
            "cuGraphInstantiate",
            result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)),
        )?;
        rec.step("cuGraphLaunch", result::graph::launch(exec, stream))?;
        device::stream::synchronize(rec, "cuStreamSynchronize", stream)?;
        rec.step("cuGraphExecDestroy", result::graph::exec_destroy(exec))?;
        rec.step("cuGraphDestroy", result::graph::destroy(graph))
    }
}

/// Reads the buffer back and checks that the graph's fill reached it.
pub(crate) fn check_graph_ran(rec: &mut Recorder, buf: sys::CUdeviceptr) -> anyhow::Result<()> {
    let mut host = vec![0u32; WORDS];
    // SAFETY: the buffer holds WORDS words, and nothing else uses it now.
    rec.step("cuMemcpyDtoH", unsafe {
        result::memcpy_dtoh_sync(&mut host, buf)
    })?;
    rec.check(GRAPH_RAN, host.iter().all(|&w| w == PATTERN));
    Ok(())
}

const CLAIMS: &[Claim] = &[
    Claim {
        id: "nvidia-sync-during-capture-is-invalid",
        source: Source::Nvidia(&PROHIBITED),
        quote: "It is invalid to synchronize or query the execution status of a stream which is \
                being captured or a captured event, because they do not represent items \
                scheduled for execution.",
        judged_by: "status-calls",
        control: Control::Run("status-calls-uncaptured"),
        // The sentence names four calls: the stream synchronised or
        // queried, a captured event synchronised or queried. Each is made
        // in a capture of its own. All four refused: confirmed; none:
        // refuted; some: partly. The control makes the same calls on the
        // same work enqueued uncaptured.
        judge: |o: &Outcome| {
            let refused = [
                STREAM_SYNCHRONIZE_REFUSED,
                STREAM_QUERY_REFUSED,
                EVENT_SYNCHRONIZE_REFUSED,
                EVENT_QUERY_REFUSED,
            ]
            .map(|f| o.flag(f));
            match refused.iter().copied().collect::<Option<Vec<bool>>>() {
                Some(r) if r.iter().all(|&x| x) => ClaimVerdict::Confirmed,
                Some(r) if r.iter().any(|&x| x) => ClaimVerdict::Partly,
                Some(_) => ClaimVerdict::Refuted,
                None => ClaimVerdict::Undecided,
            }
        },
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-end-capture-after-invalidation",
        source: Source::Nvidia(&INVALIDATION),
        quote: "This call will take the associated streams out of capture mode, but will also \
                return an error value and a NULL graph.",
        judged_by: "broken",
        control: Control::Run("fixed"),
        judge: |o: &Outcome| {
            let text = |name| o.fact(name).and_then(|v| v.as_str().map(str::to_owned));
            match (text(END_CAPTURE), text(GRAPH), text(STREAM_AFTER)) {
                (Some(end), Some(graph), Some(after)) => {
                    let error = end != DriverError::SUCCESS;
                    match (error && graph == "none", after == "out of capture mode") {
                        (true, true) => ClaimVerdict::Confirmed,
                        (true, false) => ClaimVerdict::Partly,
                        (false, _) => ClaimVerdict::Refuted,
                    }
                }
                _ => ClaimVerdict::Undecided,
            }
        },
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-captured-and-enqueued-dependency-is-an-error",
        source: Source::Nvidia(&GENERAL_RULE),
        quote: "As a general rule, when a dependency relation would connect something that is \
                captured with something that was not captured and instead enqueued for \
                execution, CUDA prefers to return an error rather than ignore the dependency.",
        judged_by: "captured-event",
        control: Control::Run("event-outside-capture"),
        // The teardown's wait connects work enqueued on the stream with an
        // event that stands for a node of the (destroyed) graph: an error
        // confirms, success refutes.
        judge: |o: &Outcome| {
            ClaimVerdict::confirmed_if(
                o.fact_text(TEARDOWN_WAIT)
                    .map(|r| r != DriverError::SUCCESS),
            )
        },
        ..Claim::EITHER
    },
    Claim {
        id: "nvidia-non-captured-event-wait-is-invalid",
        source: Source::Nvidia(&NON_CAPTURED_WAIT),
        quote: "It is invalid to wait on a non-captured event from a stream which is being \
                captured without specifying the `cudaEventWaitExternal` flag.",
        judged_by: "wait-default",
        control: Control::Run("wait-external"),
        // In driver calls: inside a capture, the stream waits on an event
        // recorded before the capture began, with no flag. The capture gives
        // a graph: refuted. It gives none, the wait or its end refused:
        // confirmed. The control passes CU_EVENT_WAIT_EXTERNAL, the flag the
        // passage names. (cudarc's tracking makes the same wait inside
        // safe-api-tracked, whose capture is refused with the isolation
        // error.)
        judge: |o: &Outcome| {
            let graph = o.fact_text(GRAPH);
            let refused = o.steps.iter().any(|s| s.is_error());
            match (graph, refused) {
                (Some("a graph"), _) => ClaimVerdict::Refuted,
                (Some("none"), true) => ClaimVerdict::Confirmed,
                _ => ClaimVerdict::Undecided,
            }
        },
        ..Claim::EITHER
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(calls: [bool; 4]) -> Outcome {
        Outcome::empty().with_facts(
            [
                STREAM_SYNCHRONIZE_REFUSED,
                STREAM_QUERY_REFUSED,
                EVENT_SYNCHRONIZE_REFUSED,
                EVENT_QUERY_REFUSED,
            ]
            .into_iter()
            .zip(calls),
        )
    }

    #[test]
    fn the_status_claim_counts_the_four_calls_refused() {
        let claim = &CLAIMS[0];
        assert_eq!(claim.id, "nvidia-sync-during-capture-is-invalid");
        assert_eq!(claim.verdict(&refused([true; 4])), ClaimVerdict::Confirmed);
        assert_eq!(claim.verdict(&refused([false; 4])), ClaimVerdict::Refuted);
        assert_eq!(
            claim.verdict(&refused([true, false, true, true])),
            ClaimVerdict::Partly
        );
        assert_eq!(claim.verdict(&Outcome::empty()), ClaimVerdict::Undecided);
    }
}
