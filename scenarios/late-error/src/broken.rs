//! The launch is not checked. The program allocates and copies for its next
//! step, and the copy, which waits for the GPU, is the first to report the
//! faulty kernel's illegal address.

use casebook_model::Recorder;

use crate::{Blame, launch_faulty, setup, unrelated_work};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let p = setup(rec)?;
    let mut blame = Blame::default();
    launch_faulty(rec, &p, &mut blame);
    // BUG: nothing checks the launch; the fault surfaces somewhere later.
    unrelated_work(rec, &p, &mut blame);
    blame.finish(rec);
    std::mem::forget(p); // its context is poisoned; skip the teardown
    Ok(())
}
// ANCHOR_END: run
