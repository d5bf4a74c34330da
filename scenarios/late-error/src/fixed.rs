//! A synchronise right after the launch (what a debug build, or
//! CUDA_LAUNCH_BLOCKING=1, does) waits for the kernel, so the fault is
//! reported there, naming the launch that caused it; the program stops.

use casebook_model::Recorder;

use crate::{Blame, CHECK, launch_faulty, setup, unrelated_work};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let p = setup(rec)?;
    let mut blame = Blame::default();
    launch_faulty(rec, &p, &mut blame);
    blame.note(rec, CHECK, p.ctx.synchronize()); // FIX: check the launch before going on
    if !blame.caught() {
        unrelated_work(rec, &p, &mut blame);
    }
    blame.finish(rec);
    std::mem::forget(p); // its context is poisoned; skip the teardown
    Ok(())
}
// ANCHOR_END: run
