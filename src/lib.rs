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
        scenario_sticky_error::scenario(),
        scenario_late_error::scenario(),
        scenario_context_leak::scenario(),
        scenario_library_handle_leak::scenario(),
        scenario_device_heap_exhaustion::scenario(),
        scenario_oversized_allocation::scenario(),
        scenario_host_memory_leak::scenario(),
        scenario_unhandled_oom_path::scenario(),
        scenario_multi_process_contention::scenario(),
    ]
}
