//! B's kernel is still waiting to read `x` when A frees it. The free is
//! ordered on A only, so A's next allocation gets the same block at once and
//! A's write lands before B reads. Every call returns CUDA_SUCCESS.

use casebook_driver::RecordSteps;
use casebook_model::Recorder;
use cudarc::driver::result;

use crate::Streams;

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    crate::drive(rec, one_run)
}

// ANCHOR: one_run
fn one_run(rec: &mut Recorder, s: &Streams) -> anyhow::Result<(bool, bool)> {
    let x = s.given(rec)?;
    s.read_on_b(rec, x)?;
    // BUG: nothing orders this free after B's kernel.
    rec.step("cuMemFreeAsync (A)", unsafe {
        result::free_async(x, s.a.cu_stream())
    })?;
    let y = s.next_owner(rec)?;
    let ok = s.reader_saw_given(rec)?;
    rec.step("cuMemFreeAsync (A)", unsafe {
        result::free_async(y, s.a.cu_stream())
    })?;
    Ok((ok, y == x))
}
// ANCHOR_END: one_run
