//! The same run, with the stream synchronised before the host reads. The
//! read now sees what the kernel wrote, every time.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;

use crate::Pipeline;

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::drive(rec, one_run)
}

// ANCHOR: one_run
fn one_run(rec: &mut Recorder, p: &Pipeline, value: f32) -> anyhow::Result<bool> {
    p.enqueue(rec, value)?;
    rec.step("cuStreamSynchronize", p.stream.synchronize())?; // FIX: wait, then read
    let fresh = p.host_holds(value);
    Ok(fresh)
}
// ANCHOR_END: one_run
