//! The parent uses CUDA, then forks a worker that does CUDA work of its own.

use casebook_driver::device;
use casebook_model::Recorder;

use crate::names::*;
use crate::worker::fork_worker;

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?; // the parent starts CUDA…
    device::unrelated_call(rec, "parent")?;
    fork_worker(rec)?; // BUG: …then forks: the worker is a copy without a usable CUDA
    let after = device::unrelated_call(rec, "parent after the fork");
    rec.fact(PARENT_AFTER, if after.is_ok() { "works" } else { "fails" });
    drop(ctx);
    Ok(())
}
// ANCHOR_END: run
