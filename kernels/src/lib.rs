//! The CUDA C++ of cuda-casebook, compiled once by nvcc (see `build.rs`).
//!
//! - [`fatbin`]: device kernels for the Rust variants, loaded with cudarc.
//! - [`cpp`]: the articles' host code made runnable, one `extern "C"`
//!   function per variant, each reporting through a [`CRecorder`].

use casebook_model::CRecorder;

/// The toolkit that compiled these kernels (`13.0.88`).
pub const TOOLKIT: &str = env!("CASEBOOK_TOOLKIT");

pub mod fatbin {
    include!(concat!(env!("OUT_DIR"), "/fatbins.rs"));
}

/// The C++ variants. Each returns 0 when it ran to its end, or the
/// `cudaError_t` that made it stop.
pub mod cpp {
    use super::CRecorder;

    unsafe extern "C" {
        pub fn casebook_missing_free_broken_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_missing_free_fixed_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_exception_leak_broken_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_exception_leak_fixed_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_unsynced_stream_broken_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_unsynced_stream_fixed_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_async_free_race_broken_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_async_free_race_fixed_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_sticky_error_as_written_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_oversized_allocation_as_written_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_oversized_allocation_broken_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_oversized_allocation_fixed_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_device_heap_exhaustion_as_written_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_device_heap_exhaustion_broken_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_device_heap_exhaustion_fixed_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_host_memory_leak_broken_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_host_memory_leak_fixed_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_fragmentation_as_written_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_fragmentation_hard_form_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_pool_retention_as_written_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_oversized_shared_memory_broken_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_oversized_shared_memory_fixed_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_malloc_in_loop_broken_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_malloc_in_loop_fixed_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_malloc_in_loop_pool_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_device_reset_broken_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_device_reset_fixed_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_open_streams_broken_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_open_streams_fixed_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_unsynced_stream_device_sync_cpp(rec: *const CRecorder) -> i32;
        pub fn casebook_device_heap_exhaustion_heap_fragmentation_cpp(rec: *const CRecorder)
        -> i32;
        pub fn casebook_device_heap_exhaustion_grid_size_cpp(rec: *const CRecorder) -> i32;
    }
}

/// Runs a C++ variant with `rec` as its recorder. A non-zero return (the
/// `cudaError_t` that stopped it) becomes an error; the failed call itself is
/// already recorded as a step.
pub fn run_cpp(
    rec: &mut casebook_model::Recorder,
    variant: unsafe extern "C" fn(*const CRecorder) -> i32,
) -> Result<(), CppStopped> {
    let table = rec.c_abi();
    // SAFETY: the table borrows `rec` for the duration of the call.
    match unsafe { variant(&table) } {
        0 => Ok(()),
        code => Err(CppStopped(code)),
    }
}

/// A C++ variant stopped early with this `cudaError_t`.
#[derive(Debug)]
pub struct CppStopped(pub i32);

impl std::fmt::Display for CppStopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the C++ variant stopped with cudaError_t {}", self.0)
    }
}

impl std::error::Error for CppStopped {}
