//! cuda-casebook: the ways CUDA programs fail, reproduced on a real GPU next
//! to their fixes. This crate holds the catalogue; `casebook` runs it and
//! `tests/snapshots.rs` is its regression suite.

use casebook_model::Scenario;

/// Every scenario, in the order a reader meets them.
pub fn catalog() -> Vec<Scenario> {
    vec![
        scenario_missing_free::scenario(),
        scenario_exception_leak::scenario(),
        scenario_unsynced_stream::scenario(),
        scenario_async_free_race::scenario(),
    ]
}
