//! The cuda-casebook harness.
//!
//! Every variant runs in a child process: the harness binary re-executes
//! itself with [`protocol::TARGET_ENV`] set (never `fork()` after CUDA is
//! initialised), the child records events to a file line by line, and the
//! parent turns those events and the way the child ended into an
//! [`Outcome`](casebook_model::Outcome). A segfault, an abort, a hang or a
//! poisoned context is thus something observed, never a harness crash.
//!
//! The same trials run under libtest-mimic ([`suite`], the snapshot
//! regression suite) and under `casebook run-all` ([`run_all`]).

pub mod bench;
pub mod environment;
pub mod fairness;
pub mod gpus;
pub mod judge;
pub mod leftover;
pub mod lock;
pub mod pytorch;
pub mod report;
pub mod reproduce;
pub mod run_all;
pub mod sanitize;
pub mod schedule;
pub mod snapshot;
pub mod suite;
pub mod trial;
pub mod workspace;

/// The child side, which the runner starts and reads back.
pub use casebook_runtime::{child, isolation, protocol};

/// Set by `cargo xtask run-all`: a missing GPU is then a failure, not a skip.
pub const REQUIRE_GPU_ENV: &str = "CASEBOOK_REQUIRE_GPU";
