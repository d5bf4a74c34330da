//! The cuda-casebook runner, in the shape of a test runner.
//!
//! Every variant runs in a child process: the harness binary re-executes
//! itself with [`protocol::TARGET_ENV`] set (never `fork()` after CUDA is
//! initialised), the child records events to a file line by line, and the
//! parent turns those events and the way the child ended into an
//! [`Outcome`](casebook_model::Outcome). A segfault, an abort, a hang or a
//! poisoned context is thus something observed, never a harness crash.
//!
//! - [`runner`]: which trials run, where, the one scheduler, the executor
//!   of one trial, and compute-sanitizer wrapped around it;
//! - [`judge`]: the verdicts, from what ran and nothing else;
//! - [`reporter`]: progress, tables, `report.md`, `junit.xml`, snapshots;
//! - [`commands`]: one module per command of `casebook`;
//! - [`suite`]: the same trials as the snapshot regression suite, under
//!   libtest-mimic, with the checks of the catalogue.
//!
//! The report's data types, and the exit codes, are `casebook-report`'s.
//! ARCHITECTURE.md draws the whole.

pub mod cgroup;
pub mod commands;
pub mod environment;
pub mod fairness;
pub mod gpus;
pub mod judge;
pub mod leftover;
pub mod lock;
pub mod pytorch;
pub mod reporter;
pub mod runner;
pub mod suite;
pub mod workspace;

/// The child side, which the runner starts and reads back.
pub use casebook_runtime::{child, isolation, protocol};

/// Set by `cargo xtask run-all`: a missing GPU is then a failure, not a skip.
pub const REQUIRE_GPU_ENV: &str = "CASEBOOK_REQUIRE_GPU";
