//! Each process plans on 90% of the free memory it saw at start, as if the
//! GPU were its own.

use casebook_model::Recorder;
use casebook_runtime::worker;

// ANCHOR: plan
fn plan(free_seen: usize) -> usize {
    free_seen / 10 * 9 // BUG: the other process saw the same free memory
}
// ANCHOR_END: plan

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    match worker::role() {
        Some(role) => crate::work(rec, &role, plan),
        None => crate::parent(rec),
    }
}
