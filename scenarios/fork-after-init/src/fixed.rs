//! The worker is forked before the parent makes any CUDA call; each
//! process then starts CUDA for itself.

use casebook_driver::device;
use casebook_model::Recorder;

use crate::names::*;
use crate::worker::fork_worker;

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    fork_worker(rec)?; // FIX: fork before this process touches CUDA
    let _ctx = device::context(rec)?; // then the parent starts CUDA
    let after = device::unrelated_call(rec, "parent after the fork");
    rec.fact(PARENT_AFTER, if after.is_ok() { "works" } else { "fails" });
    Ok(())
}
// ANCHOR_END: run
