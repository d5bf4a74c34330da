//! One module per command of `casebook`, each with its `run`. The GPU
//! commands share one [`prepare`] (the trials, the machine, the GPU lock),
//! one [`execute`] of trials (run-all, bench and reproduce) and one way to
//! [`write`] what they made; the exit codes are `casebook_report::Exit`.

pub mod bench;
pub mod collect;
pub mod env;
pub mod list;
pub mod matrix;
pub mod reproduce;
pub mod run_all;
pub mod sanitize;

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;

use casebook_model::Scenario;
use casebook_report::run::Skipped;
use casebook_report::{Exit, Report};
use casebook_runtime::isolation;

use crate::environment::{self, Environment, Unusable};
use crate::gpus::Gpu;
use crate::leftover::{self, Monitor};
use crate::lock;
use crate::reporter::{progress, report, snapshot};
use crate::runner::scheduler::Placement;
use crate::runner::{self, Trial, placement};

/// What a GPU command needs before it starts: the trials, the GPU lock,
/// the environment.
pub struct Prepared<'a> {
    pub trials: Vec<Trial<'a>>,
    /// Selected trials that cannot run here (a pair trial where fewer than
    /// two GPUs can be pinned, a PyTorch one without torch), with the
    /// reason.
    pub skipped: Vec<Skipped>,
    pub environment: Environment,
    /// The GPUs to spread the trials over (none: unpinned, as inherited).
    pub gpus: Vec<Gpu>,
    pub lock: Vec<lock::GpuLock>,
}

/// The trials of `catalog` that `filters` select, set apart from those
/// that cannot run here, the machine they run on and its GPU lock, for the
/// command `what`. Whatever stops it is said in one line and is the exit.
pub fn prepare<'a>(
    catalog: &'a [Scenario],
    filters: &[String],
    what: &str,
) -> Result<Prepared<'a>, ExitCode> {
    let trials = runner::select(catalog, filters);
    if trials.is_empty() {
        eprintln!("error: no trial matches {filters:?} (see `casebook list`)");
        return Err(Exit::NoMatch.into());
    }
    let environment = match environment::detect() {
        Ok(env) => env,
        Err(unusable) => {
            let needs = match unusable {
                Unusable::TooOld(_) => "a newer driver",
                Unusable::NoGpu(_) => "a GPU",
            };
            eprintln!("error: {what} needs {needs}: {unusable}");
            return Err(unusable.exit().into());
        }
    };
    let gpus = visible_gpus();
    // What this machine cannot run is known once its GPUs are: a pair
    // trial needs two that the run can pin.
    let (trials, skipped) = runner::split_skipped(trials, gpus.len());
    for s in &skipped {
        eprintln!("skipped: {}: {}", s.trial, s.reason);
    }
    let lock = lock::acquire(what, &gpus).map_err(|e| {
        let paths: Vec<String> = lock::paths(&gpus)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        eprintln!("error: cannot take the GPU lock {}: {e}", paths.join(", "));
        ExitCode::from(Exit::Io)
    })?;
    Ok(Prepared {
        trials,
        skipped,
        environment,
        gpus,
        lock,
    })
}

/// The GPUs this process may use (see [`crate::gpus::visible`]); none when
/// NVML cannot say, and the children then inherit what this process sees.
pub fn visible_gpus() -> Vec<Gpu> {
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    nvml_wrapper::Nvml::init()
        .map_err(|e| e.to_string())
        .and_then(|nvml| crate::gpus::visible(&nvml, visible.as_deref()))
        .unwrap_or_else(|e| {
            eprintln!("warning: trials are not pinned to GPUs: {e}");
            Vec::new()
        })
}

/// Runs `trials` on `gpus`, `jobs` side by side, showing each as it ends,
/// and builds the report (not yet written). Trials an ended run left on
/// the GPUs are named first; the exclusive trials do not run beside them.
/// Returns the report and the trials that could not be started.
pub fn execute(
    root: &Path,
    trials: &[Trial],
    environment: Environment,
    gpus: &[Gpu],
    jobs: usize,
) -> (Report, Vec<String>) {
    runner::stop_on_signals();
    let monitor = Monitor::start(gpus);
    let orphans = monitor.as_ref().map(|m| m.orphans()).unwrap_or_default();
    for o in &orphans {
        eprintln!("error: {}", leftover::describe(o));
    }
    let mut held_back = Vec::new();
    let trials: Vec<Trial> = if orphans.is_empty() {
        trials.to_vec()
    } else {
        let (alone, shared): (Vec<Trial>, Vec<Trial>) =
            trials.iter().partition(|t| t.is_exclusive());
        eprintln!(
            "error: {} trial(s) of an ended run hold GPU memory: the {} trial(s) that need a \
             whole GPU do not run beside them",
            orphans.len(),
            alone.len()
        );
        held_back = alone
            .iter()
            .map(|t| Skipped {
                trial: t.name(),
                reason: "needs a whole GPU (a pair trial, two), and trials of an ended run hold \
                         memory on it: stop them (see the orphans) and run again"
                    .to_owned(),
            })
            .collect();
        shared
    };
    let trials = &trials[..];
    if let Ok(m) = &monitor {
        let others = m.foreign_processes().saturating_sub(orphans.len());
        if others > 0 {
            eprintln!(
                "warning: {others} other process(es) use the GPU; measurements may be disturbed"
            );
        }
    }
    eprintln!(
        "{}",
        progress::header(&environment, trials.len(), jobs, gpus)
    );
    let placement = Placement {
        gpus: gpus.to_vec(),
        monitor: monitor.as_ref().ok(),
    };
    let expected = placement::expected_seconds(root);
    let several = gpus.len() > 1;
    let mut statuses = HashMap::new();
    let mut done = 0;
    let executed = runner::run(trials, jobs, &placement, &expected, |t, record, p| {
        let status = snapshot::compare(root, t.scenario, &snapshot::SnapshotView::of(*t, record));
        statuses.insert(t.name(), status);
        done += 1;
        eprintln!(
            "{}",
            progress::trial(&progress::line(done, p), *t, record, status, several)
        );
    });
    let memory = placement::smallest_memory(gpus);
    let results = trials
        .iter()
        .zip(&executed.records)
        .filter_map(|(t, r)| {
            let mut entry = report::entry(*t, r.as_ref()?, statuses[&t.name()]);
            entry.place = Some(t.place(memory));
            Some(entry)
        })
        .collect();
    let mut report = report::new(environment, results, executed.wall_seconds);
    report.run.jobs = jobs;
    report.run.interrupted = isolation::interrupted().then(|| "SIGINT or SIGTERM".to_owned());
    report.run.not_run = executed.not_run(trials).collect();
    report.run.leftovers = executed.leftovers.clone();
    report.run.gpus = gpus.to_vec();
    report.run.orphans = orphans;
    report.run.skipped = held_back;
    report.run.leftover_check_off = monitor.err();
    if report.run.interrupted.is_none() {
        report.run.critical_path = report.critical_path();
    }
    for l in &report.run.leftovers {
        eprintln!("error: {l}");
    }
    (report, executed.start_errors)
}

/// Writes what a command made with `write`, into `out`; where that fails,
/// says so for `what` (`the report`, `the matrix`) and gives the exit.
pub fn write(
    what: &str,
    out: &Path,
    write: impl FnOnce() -> std::io::Result<()>,
) -> Result<(), ExitCode> {
    write().map_err(|e| {
        eprintln!("error: cannot write {what} to {}: {e}", out.display());
        ExitCode::from(Exit::Io)
    })
}

/// Writes a run's report with its Markdown, JUnit and snapshots into
/// `out`, and gives the exit the run amounts to: the end of every command
/// that runs trials.
pub fn finish(root: &Path, out: &Path, report: &Report, start_errors: &[String]) -> ExitCode {
    if let Err(code) = write("the report", out, || {
        report::write_outputs(root, out, report)
    }) {
        return code;
    }
    exit_code(report, start_errors)
}

/// The exit code a finished (or interrupted) run amounts to.
pub fn exit_code(report: &Report, start_errors: &[String]) -> ExitCode {
    for e in start_errors {
        eprintln!("error: {e}");
    }
    ExitCode::from(if report.run.interrupted.is_some() {
        Exit::Interrupted
    } else if !start_errors.is_empty() {
        Exit::Io
    } else if !report.run.orphans.is_empty() {
        Exit::LeftByAnEndedRun
    } else if report.summary.failed > 0 {
        Exit::TrialFailed
    } else if !report.run.leftovers.is_empty() {
        Exit::MemoryLeftHeld
    } else if report.summary.snapshots_changed > 0 {
        Exit::SnapshotsDiffer
    } else {
        Exit::Success
    })
}
