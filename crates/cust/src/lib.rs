//! `casebook-cust`: the cust variants of the catalogue, in a binary of their
//! own. cust links libcuda, so a binary that uses it does not start on a
//! machine without a driver; the harness starts this one as a child process,
//! with the same `<slug>::<variant>` protocol as its own children, only where
//! a GPU is present.
//!
//! Each scenario keeps its cust variants in its own folder
//! (`scenarios/<slug>/cust.rs`, with a `VARIANTS` table); they are compiled
//! here, where cust is linked, and nowhere else (`cases.rs`, written by
//! `cargo xtask docs` from the folders).

use casebook_model::{TrialId, VariantFn};

mod cases;
mod common;

use cases::SCENARIOS;

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
