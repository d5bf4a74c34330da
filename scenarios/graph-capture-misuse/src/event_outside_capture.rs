//! The fix of cudarc#591, in driver calls: the buffer's tracking event is
//! recorded only when the stream is not capturing, so it always stands for
//! work enqueued, and the teardown's wait is valid after the graph is gone.

use casebook_driver::RecordSteps;
use casebook_driver::device::event;
use casebook_model::Recorder;
use cudarc::driver::{result, sys};

use crate::names::*;
use crate::{
    begin_capture, captured_fill, check_graph_ran, end_capture, later_call, launch_graph,
    teardown_wait, tracked_buffer,
};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let (stream, buf, tracking) = tracked_buffer(rec)?;
    let s = stream.cu_stream();
    begin_capture(rec, s)?;
    captured_fill(rec, buf, s)?;
    // FIX: a use inside a capture leaves the tracking event alone.
    // SAFETY: a live stream.
    let status = rec.step("cuStreamIsCapturing", unsafe {
        result::stream::is_capturing(s)
    })?;
    if status == sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE {
        // SAFETY: the tracking event and the stream are live.
        unsafe { event::record(rec, "cuEventRecord (tracking)", tracking, s)? };
        rec.fact(TRACKING_EVENT, "recorded during the capture");
    } else {
        rec.fact(TRACKING_EVENT, "not recorded while the stream captured");
    }
    let graph = end_capture(rec, s)?;
    launch_graph(rec, graph, s)?;
    let waited = teardown_wait(rec, tracking, s);
    // ANCHOR_END: run
    waited?;
    check_graph_ran(rec, buf)?;
    // SAFETY: the graph is gone and the stream idle.
    rec.step("cuMemFree", unsafe { result::free_sync(buf) })?;
    // SAFETY: the teardown's wait is done; the event is not used again.
    unsafe { event::destroy(rec, tracking)? };
    later_call(rec);
    Ok(())
}
