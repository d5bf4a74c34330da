//! `casebook bench`: how close the default schedule comes to its floor,
//! and what more GPUs give. One invocation runs the trials twice: first a
//! baseline (one trial at a time on one GPU; or, where several GPUs are
//! visible, the default schedule on the first of them alone), then the
//! default schedule on every visible GPU. It computes the critical path
//! from the second run's own per-trial times: every exclusive trial (they
//! run alone) plus the longest of the shared ones, spread over the GPUs.
//! The ratios of wall time to critical path and to the baseline go into
//! the report.

use std::path::PathBuf;
use std::process::ExitCode;

use casebook_model::Scenario;
use casebook_report::bench::{Bench, BenchTrial};
use casebook_report::{Report, TrialId};
use casebook_runtime::isolation;

use crate::commands::{self, prepare};
use crate::reporter::table;
use crate::runner::placement::{self, Place};
use crate::workspace;

/// The goals: the default schedule within this of its critical path…
pub const GOAL_RATIO: f64 = 1.3;
/// …the whole catalogue in less than this on one H100…
pub const GOAL_WALL_SECONDS: f64 = 150.0;
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
    eprintln!("bench 1/2: {baseline_name}");
    let (serial, errors) = commands::execute(
        &root,
        trials,
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
                exclusive: place == Place::Alone,
                holds: place == Place::Holds,
                baseline_seconds: seconds(&serial, &name),
                seconds: seconds(&report, &name),
                trial: name,
            }
        })
        .collect();
    let exclusive: f64 = rows
        .iter()
        .filter(|r| r.exclusive)
        .filter_map(|r| r.seconds)
        .sum();
    let longest_shared = rows
        .iter()
        .filter(|r| !r.exclusive)
        .filter_map(|r| r.seconds)
        .fold(0.0, f64::max);
    // Those that hold much memory run one after another beside the shared ones.
    let holding: f64 = rows
        .iter()
        .filter(|r| r.holds)
        .filter_map(|r| r.seconds)
        .sum();
    let longest = rows.iter().filter_map(|r| r.seconds).fold(0.0, f64::max);
    let critical =
        ((exclusive + longest_shared.max(holding)) / gpus.len().max(1) as f64).max(longest);
    let bench = Bench {
        jobs,
        gpus: gpus.clone(),
        baseline: baseline_name,
        baseline_wall_seconds: serial.wall_seconds,
        wall_seconds: report.wall_seconds,
        critical_path_seconds: critical,
        critical_path_ratio: report.wall_seconds / critical,
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
