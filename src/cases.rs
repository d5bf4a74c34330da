//! Every case, in the order a reader meets them. Written by `cargo xtask docs`
//! from the folders under `scenarios/` (each one's `Cargo.toml` gives its
//! `order`): edit a folder, never this file.

use casebook_model::Scenario;

#[rustfmt::skip]
pub fn all() -> Vec<Scenario> {
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
        scenario_fragmentation::scenario(),
        scenario_pool_retention::scenario(),
        scenario_caching_allocator_hold::scenario(),
        scenario_orphaned_process::scenario(),
        scenario_oversized_shared_memory::scenario(),
        scenario_malloc_in_loop::scenario(),
        scenario_device_reset::scenario(),
        scenario_open_streams::scenario(),
        scenario_second_training_run::scenario(),
        scenario_kept_loss_graphs::scenario(),
        scenario_fork_after_init::scenario(),
        scenario_arch_mismatch::scenario(),
        scenario_device_assert::scenario(),
        scenario_launch_out_of_resources::scenario(),
        scenario_wrong_context_thread::scenario(),
        scenario_graph_capture_misuse::scenario(),
        scenario_index_overflow::scenario(),
        scenario_async_copy_lifetime::scenario(),
        scenario_lazy_loading::scenario(),
        scenario_invalid_device_ordinal::scenario(),
        scenario_ipc_tensor_other_device::scenario(),
        scenario_collective_skipped_hang::scenario(),
        scenario_tensors_on_two_devices::scenario(),
        scenario_contexts_on_gpu_zero::scenario(),
        scenario_wrong_current_device::scenario(),
        scenario_misaligned_address::scenario(),
        scenario_nccl_duplicate_gpu::scenario(),
        scenario_library_handle_no_memory::scenario(),
        scenario_kernel_stack_overflow::scenario(),
        scenario_no_visible_device::scenario(),
        scenario_invalid_launch_config::scenario(),
    ]
}
