//! The four calls the Programming Guide names as invalid during a capture,
//! each in a capture of its own: the stream synchronised and queried, and an
//! event recorded in the capture synchronised and queried. Each capture
//! fills the buffer, records the event, makes its one call and ends; what
//! the call returns is recorded. The control, `status-calls-uncaptured`, is
//! the same program with the capture left out: the same work enqueued, the
//! same event recorded, the same four calls.

use casebook_driver::device::event;
use casebook_driver::{RecordSteps, device};
use casebook_model::{FactName, Recorder};
use cudarc::driver::{DriverError, result, sys};

use crate::names::*;
use crate::{PATTERN, WORDS, begin_capture};

/// Whether the work is captured into a graph or enqueued to run.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Capture {
    On,
    Off,
}

/// One of the four calls, on the stream or on the event recorded after the
/// fill.
type Call = fn(sys::CUstream, sys::CUevent) -> Result<(), DriverError>;

const CALLS: [(&str, FactName, Call); 4] = [
    ("cuStreamSynchronize", STREAM_SYNCHRONIZE_REFUSED, |s, _| {
        // SAFETY: a live stream.
        unsafe { result::stream::synchronize(s) }
    }),
    ("cuStreamQuery", STREAM_QUERY_REFUSED, |s, _| {
        // SAFETY: a live stream. CUDA_ERROR_NOT_READY (work pending) is an
        // answer, not a refusal.
        match unsafe { sys::cuStreamQuery(s) } {
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(()),
            r => r.result(),
        }
    }),
    ("cuEventSynchronize", EVENT_SYNCHRONIZE_REFUSED, |_, e| {
        // SAFETY: a live event.
        unsafe { result::event::synchronize(e) }
    }),
    ("cuEventQuery", EVENT_QUERY_REFUSED, |_, e| {
        // SAFETY: a live event; CUDA_ERROR_NOT_READY is an answer.
        match unsafe { sys::cuEventQuery(e) } {
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(()),
            r => r.result(),
        }
    }),
];

pub fn captured(rec: &mut Recorder) -> anyhow::Result<()> {
    status_calls(rec, Capture::On)
}

pub fn uncaptured(rec: &mut Recorder) -> anyhow::Result<()> {
    status_calls(rec, Capture::Off)
}

// ANCHOR: status_calls
fn status_calls(rec: &mut Recorder, capture: Capture) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let stream = rec.step("cuStreamCreate", ctx.new_stream())?;
    let s = stream.cu_stream();
    // SAFETY: freed below; only the fills touch it.
    let buf = rec.step("cuMemAlloc", unsafe { result::malloc_sync(WORDS * 4) })?;
    let marker = event::create(rec)?;
    for (call, refused, make) in CALLS {
        if capture == Capture::On {
            begin_capture(rec, s)?;
        }
        let fill = match capture {
            Capture::On => "cuMemsetD32Async (captured)",
            Capture::Off => "cuMemsetD32Async",
        };
        rec.step(fill, unsafe {
            // SAFETY: the buffer holds WORDS words; the stream is live.
            sys::cuMemsetD32Async(buf, PATTERN, WORDS, s).result()
        })?;
        // SAFETY: the event and the stream are live.
        unsafe { event::record(rec, "cuEventRecord", marker, s)? };
        let made = make(s, marker);
        rec.fact(refused, made.is_err());
        let _ = rec.step(call, made);
        if capture == Capture::On {
            end(rec, s);
        }
    }
    // SAFETY: the stream is out of capture mode and live.
    unsafe { device::stream::synchronize(rec, "cuStreamSynchronize (after)", s)? };
    // SAFETY: nothing waits on the event any more.
    unsafe { event::destroy(rec, marker)? };
    // SAFETY: nothing uses the buffer any more.
    rec.step("cuMemFree", unsafe { result::free_sync(buf) })?;
    Ok(())
}
// ANCHOR_END: status_calls

/// Ends the capture, whatever its state, and destroys the graph it gave.
fn end(rec: &mut Recorder, s: sys::CUstream) {
    let mut graph: sys::CUgraph = std::ptr::null_mut();
    // SAFETY: a live stream and an out-pointer to a local.
    let ended = unsafe { sys::cuStreamEndCapture(s, &mut graph) }.result();
    let _ = rec.step("cuStreamEndCapture", ended);
    if !graph.is_null() {
        // SAFETY: the graph came from this capture and is not used again.
        let _ = rec.step("cuGraphDestroy", unsafe { result::graph::destroy(graph) });
    }
}
