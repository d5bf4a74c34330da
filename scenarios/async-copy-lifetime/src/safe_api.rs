//! cudarc's safe layer: a `PinnedHostSlice` carries an event that each copy
//! from it records, and `as_mut_slice()` waits for that event before the
//! host may write. Notice that it records the event only when the context
//! manages several streams: on the default stream alone, nothing waits.

use std::sync::Arc;

use casebook_driver::{RecordSteps, device};
use casebook_kernels::fatbin;
use casebook_model::Recorder;
use cudarc::driver::{CudaContext, CudaStream};

use crate::{OVERWRITTEN, SENT, WORDS, hold_stream, time_copies, what_device_holds};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let stream = rec.step("cuStreamCreate", ctx.new_stream())?; // a stream of its own
    copy_and_reuse(rec, &ctx, stream)
}
// ANCHOR_END: run

// ANCHOR: default
pub fn default_stream(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let stream = ctx.default_stream(); // no stream created: the context's default
    copy_and_reuse(rec, &ctx, stream)
}
// ANCHOR_END: default

// ANCHOR: copy
fn copy_and_reuse(
    rec: &mut Recorder,
    ctx: &Arc<CudaContext>,
    stream: Arc<CudaStream>,
) -> anyhow::Result<()> {
    let spin = device::kernel(rec, ctx, fatbin::SPIN, "spin_then_fill")?;
    let mut dst = rec.step("alloc_zeros", stream.alloc_zeros::<u32>(WORDS))?;
    // SAFETY: u32 has no invalid bit patterns; it is filled before use.
    let mut host = rec.step("alloc_pinned", unsafe { ctx.alloc_pinned::<u32>(WORDS) })?;
    rec.step("PinnedHostSlice::as_mut_slice", host.as_mut_slice())?
        .fill(SENT);
    hold_stream(rec, &stream, &spin)?; // a kernel that waits 200 ms
    rec.step("memcpy_htod", stream.memcpy_htod(&host, &mut dst))?;
    // The broken program's reuse, through the safe API: as_mut_slice()
    // waits for the event the copy recorded, if it recorded one.
    rec.step(
        "PinnedHostSlice::as_mut_slice (after the copy)",
        host.as_mut_slice(),
    )?
    .fill(OVERWRITTEN);
    // ANCHOR_END: copy
    let back = rec.step("clone_dtoh", stream.clone_dtoh(&dst))?;
    rec.step("cuStreamSynchronize", stream.synchronize())?;
    what_device_holds(rec, &back);
    time_copies(rec, &stream, &spin, |rec| {
        rec.step("memcpy_htod", stream.memcpy_htod(&host, &mut dst))?;
        Ok(())
    })
}
