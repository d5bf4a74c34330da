//! Both kernels come from libraries loaded at start, but under lazy loading
//! the releasing kernel's code reaches the context at its first launch:
//! notice that it runs only once the waiting kernel has given up.

use casebook_driver::device;
use casebook_model::Recorder;

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    let kernels = crate::load(rec)?;
    // BUG: the releasing kernel is launched for the first time while the
    // waiting kernel runs; loading it waits for the waiter.
    crate::run_pair(rec, &ctx, &kernels)
}
// ANCHOR_END: run
