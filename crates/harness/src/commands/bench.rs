//! `casebook bench`: how close the default schedule comes to its floor,
//! and what more GPUs give. One invocation runs the trials twice: first a
//! baseline (one trial at a time on one GPU; or, where several GPUs are
//! visible, the default schedule on the first of them alone), then the
//! default schedule on every visible GPU. The ratios of wall time to the
//! critical path (`CriticalPath`, which every run-all report carries, read
//! from its own per-trial times) and to the baseline go into the report.

use std::path::PathBuf;
use std::process::ExitCode;

use casebook_model::Scenario;
use casebook_report::bench::{Bench, BenchTrial};
use casebook_report::schedule::CriticalPath;
use casebook_report::{Report, TrialId};
use casebook_runtime::isolation;

use crate::commands::{self, prepare};
use crate::reporter::table;
use crate::runner::{Trial, dispatch, placement};
use crate::workspace;
use casebook_report::Place;

/// The goals: the default schedule within this of its critical path…
pub const GOAL_RATIO: f64 = 1.1;
/// …the catalogue of dacd71a's trials (`docs/evidence/trials-dacd71a.txt`)
/// in at most this on one H100…
pub const GOAL_WALL_SECONDS: f64 = 220.0;
/// …and, on several GPUs, at most this share of the one-GPU wall.
pub const GOAL_GPUS_RATIO: f64 = 0.6;

pub struct Options {
    pub filters: Vec<String>,
    pub out: PathBuf,
    pub undecided: (usize, usize),
}

pub fn run(catalog: &[Scenario], options: &Options) -> ExitCode {
    let root = workspace::root();
    let prepared = match prepare(catalog, &options.filters, "bench") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let trials = &prepared.trials;
    let gpus = &prepared.gpus;
    let jobs = placement::default_jobs();
    let (baseline_name, baseline_gpus, baseline_jobs) = if gpus.len() > 1 {
        (format!("one GPU ({})", gpus[0]), &gpus[..1], jobs)
    } else {
        ("one trial at a time".to_owned(), &gpus[..], 1)
    };
    // A pair trial cannot run on the baseline's one GPU: the baseline leaves
    // it out, and says so.
    let (baseline_trials, left_out): (Vec<Trial>, Vec<Trial>) = trials
        .iter()
        .partition(|t| dispatch::skip_reason(t, baseline_gpus.len()).is_none());
    if left_out.is_empty() {
        eprintln!("bench 1/2: {baseline_name}");
    } else {
        eprintln!(
            "bench 1/2: {baseline_name}, without the {} pair trial(s), which need two GPUs",
            left_out.len()
        );
    }
    let (serial, errors) = commands::execute(
        &root,
        &baseline_trials,
        prepared.environment.clone(),
        baseline_gpus,
        baseline_jobs,
    );
    if isolation::interrupted() || !errors.is_empty() {
        // The partial report of the first run is written, not lost.
        return commands::finish(&root, &options.out, &serial, &errors);
    }
    eprintln!(
        "bench 2/2: the default schedule ({jobs} side by side on each of {} GPU(s))",
        gpus.len().max(1)
    );
    let (mut report, errors) = commands::execute(&root, trials, prepared.environment, gpus, jobs);
    let seconds = |r: &Report, trial: &TrialId| r.result(trial).map(|e| e.seconds);
    let memory = placement::smallest_memory(gpus);
    let rows: Vec<BenchTrial> = trials
        .iter()
        .map(|t| {
            let name = t.name();
            let place = t.place(memory);
            BenchTrial {
                exclusive: matches!(place, Place::Alone | Place::Pair),
                holds: place == Place::Holds,
                pair: place == Place::Pair,
                baseline_seconds: seconds(&serial, &name),
                seconds: seconds(&report, &name),
                trial: name,
            }
        })
        .collect();
    let path = CriticalPath::of(
        rows.iter().filter_map(|r| {
            let place = match (r.exclusive, r.holds) {
                _ if r.pair => Place::Pair,
                (true, _) => Place::Alone,
                (false, true) => Place::Holds,
                (false, false) => Place::Shared,
            };
            Some((place, r.seconds?))
        }),
        gpus.len(),
        report.wall_seconds,
    );
    let bench = Bench {
        jobs,
        gpus: gpus.clone(),
        baseline: baseline_name,
        baseline_left_out: left_out.iter().map(|t| t.name()).collect(),
        baseline_wall_seconds: serial.wall_seconds,
        wall_seconds: report.wall_seconds,
        critical_path_seconds: path.seconds,
        critical_path_ratio: path.ratio,
        baseline_ratio: report.wall_seconds / serial.wall_seconds,
        goal_ratio: GOAL_RATIO,
        goal_wall_seconds: GOAL_WALL_SECONDS,
        goal_gpus_ratio: GOAL_GPUS_RATIO,
        trials: rows,
    };
    println!("{}", table::bench(&bench));
    report.bench = Some(bench);
    println!("{}", table::claims_line(&report, options.undecided));
    commands::finish(&root, &options.out, &report, &errors)
}
