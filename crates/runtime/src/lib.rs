//! The child side of cuda-casebook: what runs inside a variant's process.
//!
//! - [`child`]: a re-executed binary that runs one variant and records its
//!   events (and the GPU probe);
//! - [`worker`]: a variant that needs more than one process starts its own
//!   trial again with a role;
//! - [`isolation`]: starting such a process in its own group, with a
//!   timeout, and reading back its outcome (the runner uses the same);
//! - [`reaper`]: what a child starts in turn dies with the run;
//! - [`environment`]: the GPU, driver and toolkit a run sees.
//!
//! Scenario crates depend on this and on `casebook-model`, never on the
//! runner (`casebook-harness`), which schedules, judges and snapshots.

pub mod child;
pub mod environment;
pub mod isolation;
pub mod reaper;
pub mod worker;
