//! `casebook-cust`: the cust variants of the catalogue, in a binary of their
//! own. cust links libcuda, so a binary that uses it does not start on a
//! machine without a driver; the harness starts this one as a child process,
//! with the same `<slug>::<variant>` protocol as its own children, only where
//! a GPU is present.

use std::process::ExitCode;

use casebook_model::VariantFn;

mod async_free_race;
mod common;
mod context_leak;
mod missing_free;
mod unsynced_stream;

/// Every variant this binary serves.
const VARIANTS: &[(&str, VariantFn)] = &[
    ("missing-free::broken-cust", missing_free::broken),
    ("missing-free::fixed-cust", missing_free::fixed),
    (
        "missing-free::drop-after-fault-cust",
        missing_free::drop_after_fault,
    ),
    ("context-leak::broken-cust", context_leak::broken),
    ("context-leak::fixed-cust", context_leak::fixed),
    ("unsynced-stream::broken-cust", unsynced_stream::broken),
    ("unsynced-stream::fixed-cust", unsynced_stream::fixed),
    (
        "unsynced-stream::pipeline-cust",
        unsynced_stream::pipeline_blocking,
    ),
    (
        "unsynced-stream::pipeline-async-cust",
        unsynced_stream::pipeline_async,
    ),
    ("async-free-race::broken-cust", async_free_race::broken),
    ("async-free-race::fixed-cust", async_free_race::fixed),
    ("async-free-race::drop-cust", async_free_race::plain_drop),
];

fn lookup(target: &str) -> Option<VariantFn> {
    VARIANTS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, run)| *run)
}

const USAGE: &str = "casebook-cust: runs one cust variant when the casebook harness starts it \
                     (CASEBOOK_CHILD=<scenario>::<variant>, CASEBOOK_EVENTS=<file>); run the \
                     variants with `casebook run-all --filter cust`";

fn main() -> ExitCode {
    casebook_harness::child::serve_variants_if_child(&lookup);
    if std::env::args().skip(1).any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        for (name, _) in VARIANTS {
            println!("  {name}");
        }
        return ExitCode::SUCCESS;
    }
    eprintln!("{USAGE}");
    ExitCode::from(2)
}
