//! A buffer's tracking event, recorded after every use of the buffer the
//! way cudarc's safe API records it (cudarc#590), is recorded while the
//! stream is capturing: it becomes a captured event, a node of the graph.
//! After the graph is destroyed, the buffer's teardown waits on it.

use casebook_driver::RecordSteps;
use casebook_driver::device::event;
use casebook_model::Recorder;
use cudarc::driver::result;

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
    // BUG: the use inside the capture records the tracking event too, so
    // the event now stands for a node of the graph, not for work enqueued.
    // SAFETY: the tracking event and the stream are live.
    unsafe { event::record(rec, "cuEventRecord (tracking, during capture)", tracking, s)? };
    let graph = end_capture(rec, s)?;
    launch_graph(rec, graph, s)?; // runs it, then destroys the graph
    // The buffer's teardown: wait for its last use, then free it.
    let waited = teardown_wait(rec, tracking, s);
    rec.fact(TRACKING_EVENT, "recorded during the capture");
    // ANCHOR_END: run
    let _ = waited;
    check_graph_ran(rec, buf)?;
    // SAFETY: the graph is gone and the stream idle.
    rec.step("cuMemFree", unsafe { result::free_sync(buf) })?;
    // SAFETY: the teardown's wait is done; the event is not used again.
    unsafe { event::destroy(rec, tracking)? };
    later_call(rec);
    Ok(())
}
