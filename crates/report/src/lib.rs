//! What a cuda-casebook run recorded, as data: the role nextest-metadata
//! plays for nextest. The runner (`casebook-harness`) writes these types;
//! the cookbook, `casebook matrix` and anyone else read them without
//! linking the runner (no NVML, no signal handling, no snapshots).
//!
//! - [`run`]: `report.json`, one run's results, machine and facts;
//! - [`sanitizer`]: `sanitize.json`, the detection matrix, and how a
//!   compute-sanitizer log is read;
//! - [`matrix`]: `matrix.json`, reports of several machines merged;
//! - [`schedule`]: where each trial ran, and the schedule against its
//!   floor;
//! - [`bench`], [`reproduce`]: what those commands measured;
//! - [`verdict`]: what a trial amounts to, as values;
//! - [`exit`]: the exit codes of every command, each distinct, with the
//!   words `--help` and the book show for them.
//!
//! A trial is named by [`TrialId`] (`<slug>::<variant>`), which the model
//! defines because the child side reads it too.

pub mod bench;
pub mod exit;
mod key_figures;
pub mod machine;
pub mod matrix;
pub mod partition;
pub mod reproduce;
pub mod run;
pub mod sanitizer;
pub mod schedule;
pub mod verdict;

pub use casebook_model::TrialId;
pub use exit::Exit;
pub use machine::{Environment, Gpu};
pub use partition::Partition;
pub use run::{Report, ResultEntry, SnapshotStatus, Source};
pub use schedule::Place;
pub use verdict::{ClaimResult, Verdict};
