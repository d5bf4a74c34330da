//! `casebook-cust`: the cust variants of the catalogue, in a binary of their
//! own. cust links libcuda, so a binary that uses it does not start on a
//! machine without a driver; the harness starts this one as a child process,
//! with the same `<slug>::<variant>` protocol as its own children, only where
//! a GPU is present.
//!
//! Each scenario keeps its cust variants in its own folder
//! (`scenarios/<slug>/cust.rs`, with a `VARIANTS` table); they are compiled
//! here, where cust is linked, and nowhere else.

use casebook_model::{TrialId, VariantFn};

mod common;

#[path = "../../../scenarios/async-free-race/cust.rs"]
mod async_free_race;
#[path = "../../../scenarios/context-leak/cust.rs"]
mod context_leak;
#[path = "../../../scenarios/missing-free/cust.rs"]
mod missing_free;
#[path = "../../../scenarios/unsynced-stream/cust.rs"]
mod unsynced_stream;

/// Every scenario with cust variants, and its table.
const SCENARIOS: &[(&str, &[(&str, VariantFn)])] = &[
    ("missing-free", missing_free::VARIANTS),
    ("context-leak", context_leak::VARIANTS),
    ("unsynced-stream", unsynced_stream::VARIANTS),
    ("async-free-race", async_free_race::VARIANTS),
];

/// The trial of every variant served here, with its function.
pub fn served() -> impl Iterator<Item = (TrialId, VariantFn)> {
    SCENARIOS.iter().flat_map(|(slug, table)| {
        table
            .iter()
            .map(move |(name, run)| (TrialId::new(*slug, *name), *run))
    })
}

pub fn lookup(target: &str) -> Option<VariantFn> {
    served()
        .find(|(trial, _)| trial == target)
        .map(|(_, run)| run)
}
