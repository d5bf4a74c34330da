//! Only the fill is captured; the synchronisation comes after the graph is
//! launched, outside the capture.

use casebook_driver::{RecordSteps, device};
use casebook_model::Recorder;
use cudarc::driver::{result, sys};

use crate::{WORDS, begin_capture, captured_fill, check_graph_ran, end_capture, later_call};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let stream = rec.step("cuStreamCreate", ctx.new_stream())?;
    // SAFETY: freed below; only the graph's fill touches it.
    let buf = rec.step("cuMemAlloc", unsafe { result::malloc_sync(WORDS * 4) })?;
    begin_capture(rec, stream.cu_stream())?;
    captured_fill(rec, buf, stream.cu_stream())?;
    let graph = end_capture(rec, stream.cu_stream())?; // FIX: nothing else inside the capture
    // SAFETY: the graph was just captured; it is destroyed below.
    let exec = rec.step("cuGraphInstantiate", unsafe {
        result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0))
    })?;
    rec.step("cuGraphLaunch", unsafe {
        result::graph::launch(exec, stream.cu_stream())
    })?;
    rec.step("cuStreamSynchronize", stream.synchronize())?; // after the capture: allowed
    // ANCHOR_END: run
    check_graph_ran(rec, buf)?;
    // SAFETY: the graph and its instance are no longer launched.
    unsafe {
        rec.step("cuGraphExecDestroy", result::graph::exec_destroy(exec))?;
        rec.step("cuGraphDestroy", result::graph::destroy(graph))?;
        rec.step("cuMemFree", result::free_sync(buf))?;
    }
    later_call(rec);
    Ok(())
}
