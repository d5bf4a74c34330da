//! The runner: which trials run here ([`dispatch`]), where each runs
//! ([`placement`]), the one [`scheduler`] that starts them, and the
//! [`executor`] of one trial; compute-sanitizer is a [`sanitizer`] wrapped
//! around that executor, so `sanitize` schedules its cells as `run-all`
//! schedules its trials. What is shown of a run is the reporter's; what a
//! command does with it, the command's.

pub mod dispatch;
pub mod executor;
pub mod placement;
pub mod sanitizer;
pub mod scheduler;

pub use dispatch::{Trial, in_shard, select, split_skipped};

use std::collections::HashMap;

use casebook_model::Termination;
use casebook_report::{Exit, TrialId};
use casebook_runtime::isolation;

use crate::leftover::Leftover;
use executor::TrialRecord;
use placement::smallest_memory;
use scheduler::{Job, Placement, Progress};

/// Makes Ctrl-C and SIGTERM stop the run: running children are killed with
/// their groups, and the caller writes the partial report. A second signal
/// exits at once.
pub fn stop_on_signals() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let installed = ctrlc::set_handler(|| {
            if isolation::interrupted() {
                std::process::exit(i32::from(Exit::Interrupted.code()));
            }
            eprintln!("\ninterrupted: stopping the running trials, writing the partial report");
            isolation::interrupt();
        });
        if let Err(e) = installed {
            eprintln!("warning: Ctrl-C will not write a partial report: {e}");
        }
    });
}

/// What came of running trials.
pub struct Executed {
    /// The record of each trial, in the order given; `None` if it did not
    /// run to its end (the run was interrupted, or it could not start).
    pub records: Vec<Option<TrialRecord>>,
    pub leftovers: Vec<Leftover>,
    /// Trials whose child process could not be started, with the reason.
    pub start_errors: Vec<String>,
    pub wall_seconds: f64,
}

impl Executed {
    pub fn not_run<'a>(&'a self, trials: &'a [Trial]) -> impl Iterator<Item = TrialId> + 'a {
        trials
            .iter()
            .zip(&self.records)
            .filter(|(_, r)| r.is_none())
            .map(|(t, _)| t.name())
    }
}

/// Runs `trials` through the scheduler, `jobs` side by side on each GPU of
/// `placement`, the longer first by `expected`; `on_done` sees each trial
/// that ran to its end (on the calling thread), with the progress so far.
pub fn run(
    trials: &[Trial],
    jobs: usize,
    placement: &Placement,
    expected: &HashMap<TrialId, f64>,
    mut on_done: impl FnMut(&Trial, &TrialRecord, &Progress),
) -> Executed {
    let memory = smallest_memory(&placement.gpus);
    let scheduled: Vec<Job> = trials
        .iter()
        .map(|t| Job {
            trial: t.name(),
            place: t.place(memory),
            expected: expected.get(&t.name()).copied(),
        })
        .collect();
    let mut records: Vec<Option<TrialRecord>> = vec![None; trials.len()];
    let mut start_errors = Vec::new();
    let dispatched = scheduler::run(
        &scheduled,
        jobs,
        placement,
        |i, gpus| executor::run(trials[i], gpus),
        |i, result, progress| match result {
            Ok(record) if record.outcome.termination == Termination::Interrupted => {}
            Ok(record) => {
                on_done(&trials[i], &record, progress);
                records[i] = Some(record);
            }
            Err(e) => start_errors.push(format!(
                "{}: cannot start its process: {e}",
                trials[i].name()
            )),
        },
    );
    start_errors.extend(dispatched.unplaced.iter().map(|&i| {
        format!(
            "{}: not started: it needs {} GPUs and the run has {}",
            trials[i].name(),
            scheduled[i].place.gpus(),
            placement.gpus.len()
        )
    }));
    Executed {
        records,
        leftovers: dispatched.leftovers,
        start_errors,
        wall_seconds: dispatched.wall_seconds,
    }
}
