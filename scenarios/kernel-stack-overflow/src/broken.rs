//! The walk runs on the default per-thread stack.

use casebook_driver::device;
use casebook_model::Recorder;

use crate::{record_limit, walk};

// ANCHOR: run
pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    let ctx = device::context(rec)?;
    record_limit(rec, &ctx); // BUG: the default stack, whatever the recursion needs
    walk(rec, &ctx)
}
// ANCHOR_END: run
