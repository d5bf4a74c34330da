//! Workers: a variant that needs more than one process (to keep a fault
//! away from its own context, or to contend with another process for the
//! GPU) re-executes its own trial as a worker with a role. The worker runs
//! the same variant function, which asks [`role`] and acts on it.
//!
//! Spawn workers before the variant touches CUDA: a process must never fork
//! after initialising CUDA. Each worker records to its own event file, so
//! its errors are its own outcome, not the variant's.

use std::time::Duration;

use casebook_model::Outcome;

use crate::child::TARGET_ENV;
use crate::isolation::{self, ChildCommand};

/// Set in a worker to the role it was given.
pub const ROLE_ENV: &str = "CASEBOOK_WORKER";

/// The role this process was started with, if it is a worker.
pub fn role() -> Option<String> {
    std::env::var(ROLE_ENV).ok()
}

/// Runs the current trial again as a worker with `role`, and returns its
/// outcome: what it recorded and how it ended.
pub fn run(role: &str, timeout: Duration, env: &[(&str, &str)]) -> std::io::Result<Outcome> {
    let target = std::env::var(TARGET_ENV).map_err(|_| {
        std::io::Error::other(format!(
            "a worker can only be started from a trial ({TARGET_ENV} is not set)"
        ))
    })?;
    let mut cmd = ChildCommand::this_binary(target, timeout)?;
    cmd.env.push((ROLE_ENV.to_owned(), role.to_owned()));
    cmd.env
        .extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    let child = isolation::run(&cmd)?;
    Ok(isolation::outcome(&child))
}

/// Copies what a worker recorded into the variant's own record, as one
/// iteration labelled `label`: its calls (as provoked, so they are no
/// symptoms of the variant), its checks and facts prefixed with the label,
/// and how it ended.
pub fn replay(rec: &mut casebook_model::Recorder, label: &str, worker: &Outcome) {
    use casebook_model::{Event, Step};
    rec.iteration(label, |rec| {
        for step in &worker.steps {
            rec.emit(&Event::Step(Step {
                tolerated: true,
                ..step.clone()
            }));
        }
    });
    for check in &worker.checks {
        rec.fact(&format!("{label}: {}", check.name), check.ok);
    }
    for (key, value) in &worker.facts {
        rec.fact(&format!("{label}: {key}"), value);
    }
    rec.fact(&format!("{label}: ended"), worker.termination.to_string());
}
