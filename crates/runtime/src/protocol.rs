//! What the runner and a child agree on: the environment the runner sets
//! for the child, the exit codes a child gives for itself, and the names
//! the GPU probe records under. Both sides import this; neither imports
//! the other for it.

/// What the child must run: a trial's name (`<slug>::<variant>`), or
/// [`PROBE`].
pub const TARGET_ENV: &str = "CASEBOOK_CHILD";
/// The pid of the harness that started the child: a process that carries
/// it belongs to a casebook run, and to a dead one once that pid is gone.
pub const RUN_ENV: &str = "CASEBOOK_RUN";
/// The file the child appends its events to, one JSON line each.
pub const EVENTS_ENV: &str = "CASEBOOK_EVENTS";
/// The target that reports the GPU and driver instead of running a variant.
pub const PROBE: &str = "probe";

/// NVLink multicast (NVLS) off in NCCL, PyTorch and NVSHMEM, in every child
/// and so in everything a child starts: a program that uses it can put the
/// GPUs of a shared host out of service for a day or more. The runner sets
/// these after a command's own environment, so no trial turns it back on;
/// nothing in the casebook calls `cuMulticastCreate` either.
pub const MULTICAST_OFF: [(&str, &str); 3] = [
    ("NCCL_NVLS_ENABLE", "0"),
    ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
    ("NVSHMEM_DISABLE_NVLS", "1"),
];

/// Exit code of a child whose variant panicked.
pub const PANIC_EXIT: i32 = 101;
/// Exit code of a child asked for something it does not know.
pub const UNKNOWN_TARGET_EXIT: i32 = 64;
/// Exit code of a child whose harness ended before it could start.
pub const UNKNOWN_PARENT_EXIT: i32 = 65;

/// The names the probe records what it found under: facts unless said.
pub mod probe {
    /// `NVIDIA H100 80GB HBM3`.
    pub const GPU: &str = "gpu";
    /// The CUDA version the driver supports, `13.0`.
    pub const CUDA: &str = "cuda";
    /// `9.0`.
    pub const COMPUTE_CAPABILITY: &str = "compute_capability";
    /// A measure, in bytes.
    pub const MEMORY_TOTAL_BYTES: &str = "memory_total_bytes";
    /// A measure: the devices the driver sees.
    pub const DEVICE_COUNT: &str = "device_count";
    /// Why there is no GPU to run on, where there is none.
    pub const NO_GPU: &str = "no_gpu";
    /// Why the driver cannot run this build, where it is too old.
    pub const DRIVER_TOO_OLD: &str = "driver_too_old";
}
