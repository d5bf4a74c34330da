//! The child side of cuda-casebook: what runs inside a variant's process.
//!
//! - [`protocol`]: what the runner and a child agree on (the environment
//!   it is started with, its own exit codes, the probe's names);
//! - [`child`]: a re-executed binary that runs one variant and records its
//!   events, or the [`probe`] of the GPU;
//! - [`worker`]: a variant that needs more than one process starts its own
//!   trial again with a role;
//! - [`isolation`]: starting such a process in its own group, with a
//!   timeout, and reading back its outcome (a variant starting a worker
//!   and the runner starting a trial use the same);
//! - [`reaper`]: what a child starts in turn dies with the run.
//!
//! Scenario crates depend on this and on `casebook-model`, never on the
//! runner (`casebook-harness`), which schedules, judges and snapshots.

pub mod child;
pub mod isolation;
pub mod probe;
pub mod protocol;
pub mod reaper;
pub mod worker;
