//! cudarc#590's pattern through cudarc's safe API: a long-lived buffer,
//! made while the context tracks its buffers' uses with events, is used
//! inside a capture; the graph is destroyed, then the buffer is dropped.
//! Before cudarc#591, the use recorded the buffer's event into the graph
//! and the drop waited on it, and the drop's error was parked in the
//! context and returned by the next, unrelated call.

use std::sync::Arc;

use casebook_driver::{RecordSteps, device};
use casebook_model::Recorder;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DriverError, sys};

use crate::names::*;
use crate::{PATTERN, WORDS, later_call};

// ANCHOR: run
/// Event tracking turned off before the capture, as cudarc's maintainer
/// advises for capture (cudarc#501).
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let (ctx, stream, buf) = written_buffer(rec)?;
    // SAFETY: one stream uses the buffer from here on.
    unsafe { ctx.disable_event_tracking() };
    capture_and_drop(rec, &ctx, &stream, buf)
}
// ANCHOR_END: run

// ANCHOR: tracked
/// The same with cudarc's defaults: the context tracks every use.
pub fn tracked(rec: &mut Recorder) -> anyhow::Result<()> {
    let (ctx, stream, buf) = written_buffer(rec)?;
    capture_and_drop(rec, &ctx, &stream, buf)
}
// ANCHOR_END: tracked

/// A stream of its own (so the context is in multi-stream mode, where
/// cudarc tracks uses with events) and a buffer written on it, made while
/// tracking is on.
fn written_buffer(
    rec: &mut Recorder,
) -> anyhow::Result<(Arc<CudaContext>, Arc<CudaStream>, CudaSlice<u32>)> {
    let ctx = device::context(rec)?;
    let stream = rec.step("CudaContext::new_stream", ctx.new_stream())?;
    let buf = rec.step(
        "CudaStream::clone_htod",
        stream.clone_htod(&vec![PATTERN; WORDS]),
    )?;
    rec.step("CudaStream::synchronize", stream.synchronize())?;
    Ok((ctx, stream, buf))
}

/// Captures a zeroing of `buf`, runs the graph, destroys it, then drops
/// the buffer and asks the context for an error parked by a drop.
fn capture_and_drop(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    mut buf: CudaSlice<u32>,
) -> anyhow::Result<()> {
    rec.fact(TRACKING, ctx.is_managing_stream_synchronization());
    rec.step(
        "CudaStream::begin_capture",
        stream.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL),
    )?;
    let zeroed = rec.step(
        "CudaStream::memset_zeros (captured)",
        stream.memset_zeros(&mut buf),
    );
    let graph = rec.step(
        "CudaStream::end_capture",
        stream.end_capture(sys::CUgraphInstantiate_flags(0)),
    );
    if let Ok(status) = rec.step("CudaStream::capture_status", stream.capture_status()) {
        crate::record_stream_after(rec, status);
    }
    let graph = match (zeroed, graph) {
        (Ok(()), Ok(Some(graph))) => graph,
        (zeroed, graph) => {
            rec.fact(GRAPH, "none");
            zeroed?;
            graph?;
            return Ok(());
        }
    };
    rec.fact(GRAPH, "a graph");
    rec.step("CudaGraph::launch", graph.launch())?;
    rec.step("CudaStream::synchronize", stream.synchronize())?;
    let host = rec.step("CudaStream::clone_dtoh", stream.clone_dtoh(&buf))?;
    rec.check(GRAPH_RAN_ZEROS, host.iter().all(|&w| w == 0));
    drop(graph);
    drop(buf); // cudarc#590: this drop's wait failed, and the error was parked
    let parked: Result<(), DriverError> = ctx.check_err();
    rec.fact(
        PARKED_ERROR,
        match &parked {
            Ok(()) => "none".to_owned(),
            Err(e) => casebook_driver::ResultName::result_name(e),
        },
    );
    rec.step("CudaContext::check_err (after the drops)", parked)?;
    later_call(rec);
    Ok(())
}
