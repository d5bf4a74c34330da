//! `graph-capture-misuse`: work is recorded into a CUDA graph by stream
//! capture, and a call that cannot be recorded (a synchronisation, a
//! synchronous allocation) is made while the stream is capturing. The call
//! returns "operation not permitted when stream is capturing", the capture
//! is invalidated, and ending it returns "operation failed due to a
//! previous error during capture" and no graph. The fix makes only calls
//! that can be captured inside the capture, and the rest before or after.

use casebook_model::{
    Claim, ClaimVerdict, Outcome, Passage, Reach, Recorder, Report, Requirement, ResultName,
    Scenario, Source, Symptom, Variant, cudarc, device,
};
use cudarc::driver::{DriverError, result, sys};

mod broken;
mod fixed;

casebook_model::names_module!();

casebook_model::cpp_variants! {
    "cpp/graph_capture_misuse.cu" {
        broken: casebook_graph_capture_misuse_broken_cpp,
        fixed: casebook_graph_capture_misuse_fixed_cpp,
    }
}

const UNSUPPORTED: &str = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
const INVALIDATED: &str = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
const UNSUPPORTED_CPP: &str = "cudaErrorStreamCaptureUnsupported";
const INVALIDATED_CPP: &str = "cudaErrorStreamCaptureInvalidated";

/// The captured work fills this many 32-bit words with [`PATTERN`].
pub const WORDS: usize = 1 << 20;
pub const PATTERN: u32 = 0x2a2a_2a2a;

pub fn scenario() -> Scenario {
    Scenario {
        slug: "graph-capture-misuse",
        title: "CUDA error: operation not permitted when stream is capturing",
        cause: "During stream capture the work enqueued on the stream is recorded, not run, so \
                a call that waits for it (a stream or device synchronisation) or that cannot be \
                recorded (cudaMalloc, a synchronous copy) is refused, and the capture is \
                invalidated: ending it returns an error and no graph. Make such calls before \
                the capture begins or after it ends.",
        symptoms: &[
            "operation not permitted when stream is capturing",
            "an error on the second call",
        ],
        requires: Requirement::GPU,
        reports: REPORTS,
        claims: CLAIMS,
        variants: vec![
            Variant::broken("broken", Symptom::cuda_error(UNSUPPORTED), cudarc!(broken))
                .then_shows(Symptom::cuda_error(INVALIDATED)),
            Variant::fixed("fixed", cudarc!(fixed)),
            Variant::broken(
                "broken-cpp",
                Symptom::cuda_error(UNSUPPORTED_CPP),
                cpp::broken,
            )
            .then_shows(Symptom::cuda_error(INVALIDATED_CPP)),
            Variant::fixed("fixed-cpp", cpp::fixed),
        ],
    }
}

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

const CLAIMS: &[Claim] = &[
    Claim {
        id: "nvidia-sync-during-capture-is-invalid",
        source: Source::Nvidia(&PROHIBITED),
        quote: "It is invalid to synchronize or query the execution status of a stream which is \
                being captured or a captured event, because they do not represent items \
                scheduled for execution.",
        judged_by: "broken",
        reach: Reach::Either,
        // The synchronisation inside the capture is refused (confirmed) or
        // returns success (refuted).
        judge: |o: &Outcome| match o.first_error() {
            Some(step) if step.call == "cuStreamSynchronize" => ClaimVerdict::Confirmed,
            Some(_) => ClaimVerdict::Undecided,
            None => ClaimVerdict::Refuted,
        },
    },
    Claim {
        id: "nvidia-end-capture-after-invalidation",
        source: Source::Nvidia(&INVALIDATION),
        quote: "This call will take the associated streams out of capture mode, but will also \
                return an error value and a NULL graph.",
        judged_by: "broken",
        reach: Reach::Either,
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
    },
];

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
        rec.fact(
            STREAM_AFTER,
            if status == sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
                "out of capture mode"
            } else {
                "still capturing"
            },
        );
    }
    ended.map(|()| graph)
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
