//! The stream synchronises while it is capturing.

use casebook_driver::{RecordSteps, device};
use casebook_model::Recorder;
use cudarc::driver::result;

use crate::{WORDS, begin_capture, captured_fill, end_capture, later_call};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let stream = rec.step("cuStreamCreate", ctx.new_stream())?;
    // SAFETY: freed below; only the captured fill touches it.
    let buf = rec.step("cuMemAlloc", unsafe { result::malloc_sync(WORDS * 4) })?;
    begin_capture(rec, stream.cu_stream())?;
    captured_fill(rec, buf, stream.cu_stream())?;
    // BUG: waits for work that is only being recorded, not run.
    let _ = rec.step("cuStreamSynchronize", stream.synchronize());
    let _ = end_capture(rec, stream.cu_stream());
    later_call(rec);
    // SAFETY: nothing uses the buffer any more.
    rec.step("cuMemFree", unsafe { result::free_sync(buf) })?;
    Ok(())
}
// ANCHOR_END: run
