//! The passage's rule in driver calls, with nothing of cudarc's tracking in
//! between: inside a capture, the stream waits on an event recorded before
//! the capture began (a non-captured event), with no flag (`wait-default`)
//! or with CU_EVENT_WAIT_EXTERNAL (`wait-external`, the control).

use casebook_driver::RecordSteps;
use casebook_driver::device::{self, event};
use casebook_model::Recorder;
use cudarc::driver::{result, sys};

use crate::{
    begin_capture, captured_fill, check_graph_ran, end_capture, later_call, launch_graph,
    tracked_buffer,
};

pub fn default(rec: &mut Recorder) -> anyhow::Result<()> {
    wait_in_capture(rec, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
}

pub fn external(rec: &mut Recorder) -> anyhow::Result<()> {
    wait_in_capture(rec, sys::CUevent_wait_flags::CU_EVENT_WAIT_EXTERNAL)
}

// ANCHOR: wait_in_capture
fn wait_in_capture(rec: &mut Recorder, flags: sys::CUevent_wait_flags) -> anyhow::Result<()> {
    // The event is recorded on the stream before the capture begins.
    let (stream, buf, before_capture) = tracked_buffer(rec)?;
    let s = stream.cu_stream();
    begin_capture(rec, s)?;
    // SAFETY: a live stream and a live event.
    let waited = unsafe {
        device::stream::wait_event(
            rec,
            "cuStreamWaitEvent (in the capture, on the event recorded before it)",
            s,
            before_capture,
            flags,
        )
    };
    if waited.is_ok() {
        let _ = captured_fill(rec, buf, s);
    }
    // The capture is ended whatever the wait returned: whether a graph
    // comes back is what the passage's "invalid" decides.
    let graph = end_capture(rec, s);
    // ANCHOR_END: wait_in_capture
    if let Ok(graph) = graph {
        launch_graph(rec, graph, s)?;
        check_graph_ran(rec, buf)?;
    }
    // SAFETY: the stream is out of capture and idle; nothing uses the buffer.
    unsafe { device::stream::synchronize(rec, "cuStreamSynchronize", s)? };
    rec.step("cuMemFree", unsafe { result::free_sync(buf) })?;
    // SAFETY: no wait on the event is pending; it is not used again.
    unsafe { event::destroy(rec, before_capture)? };
    later_call(rec);
    Ok(())
}
