//! The host reads the pinned buffer right after enqueuing the kernel and the
//! copy. Both calls returned CUDA_SUCCESS, and neither has run yet: the host
//! sees the sentinel it wrote itself.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;

use crate::Pipeline;

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::drive(rec, one_run)
}

// ANCHOR: one_run
fn one_run(rec: &mut Recorder, p: &Pipeline, value: f32) -> anyhow::Result<bool> {
    p.enqueue(rec, value)?;
    // BUG: the host reads before the stream has finished.
    let fresh = p.host_holds(value);
    rec.step("cuStreamSynchronize", p.stream.synchronize())?;
    Ok(fresh)
}
// ANCHOR_END: one_run
