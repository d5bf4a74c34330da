//! The processes share a plan: each takes its share of 90% of the free
//! memory, so together they fit.

use casebook_model::Recorder;
use casebook_runtime::worker;

use crate::WORKERS;

// ANCHOR: plan
fn plan(free_seen: usize) -> usize {
    free_seen / 10 * 9 / WORKERS // FIX: a budget per process, from a shared plan
}
// ANCHOR_END: plan

pub fn run(rec: &mut Recorder) -> anyhow::Result<()> {
    match worker::role() {
        Some(role) => crate::work(rec, &role, plan),
        None => crate::parent(rec),
    }
}
