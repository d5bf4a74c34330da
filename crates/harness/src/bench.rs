//! `casebook bench`: how close the default schedule comes to its floor.
//! One invocation runs the trials twice, one at a time (`--jobs 1`) and
//! with the default schedule, and computes the critical path from the
//! second run's own per-trial times: every exclusive trial (they run alone)
//! plus the longest of the shared ones. The ratio of wall time to critical
//! path says how much the schedule loses; it goes into the report.

use std::path::PathBuf;
use std::process::ExitCode;

use casebook_model::Scenario;
use comfy_table::{Table, presets};
use serde::{Deserialize, Serialize};

use crate::report::Report;
use crate::run_all::{self, exit};
use crate::{isolation, schedule, workspace};

/// The goals: the default schedule within this of its critical path…
pub const GOAL_RATIO: f64 = 1.3;
/// …and the whole catalogue in less than this.
pub const GOAL_WALL_SECONDS: f64 = 15.0;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bench {
    pub jobs: usize,
    pub serial_wall_seconds: f64,
    pub wall_seconds: f64,
    /// Sum of the exclusive trials plus the longest shared one.
    pub critical_path_seconds: f64,
    /// `wall_seconds / critical_path_seconds`.
    pub critical_path_ratio: f64,
    pub goal_ratio: f64,
    pub goal_wall_seconds: f64,
    /// Each trial's time in both runs, context creation included.
    pub trials: Vec<BenchTrial>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchTrial {
    pub trial: String,
    pub exclusive: bool,
    pub serial_seconds: Option<f64>,
    pub seconds: Option<f64>,
}

pub struct Options {
    pub filters: Vec<String>,
    pub out: PathBuf,
    pub undecided: (usize, usize),
}

pub fn run(catalog: &[Scenario], options: &Options) -> ExitCode {
    let root = workspace::root();
    let prepared = match run_all::prepare(catalog, &options.filters, "bench") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let trials = &prepared.trials;
    eprintln!("bench 1/2: one trial at a time");
    let (serial, errors) = run_all::execute(&root, trials, prepared.environment.clone(), 1);
    if isolation::interrupted() || !errors.is_empty() {
        // The partial report of the first run is written, not lost.
        if let Err(e) = run_all::write_outputs(&root, &options.out, &serial) {
            eprintln!(
                "error: cannot write the report to {}: {e}",
                options.out.display()
            );
            return ExitCode::from(exit::IO);
        }
        return run_all::exit_code(&serial, &errors);
    }
    let jobs = schedule::default_jobs();
    eprintln!("bench 2/2: the default schedule ({jobs} side by side)");
    let (mut report, errors) = run_all::execute(&root, trials, prepared.environment, jobs);
    let seconds = |r: &Report, name: &str| {
        r.results
            .iter()
            .find(|e| format!("{}::{}", e.scenario, e.variant) == name)
            .map(|e| e.seconds)
    };
    let rows: Vec<BenchTrial> = trials
        .iter()
        .map(|t| {
            let name = t.name();
            BenchTrial {
                exclusive: t.is_exclusive(),
                serial_seconds: seconds(&serial, &name),
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
    let critical = exclusive + longest_shared;
    let bench = Bench {
        jobs,
        serial_wall_seconds: serial.wall_seconds,
        wall_seconds: report.wall_seconds,
        critical_path_seconds: critical,
        critical_path_ratio: report.wall_seconds / critical,
        goal_ratio: GOAL_RATIO,
        goal_wall_seconds: GOAL_WALL_SECONDS,
        trials: rows,
    };
    println!("{}", table(&bench));
    report.bench = Some(bench);
    println!("{}", run_all::claims_line(&report, options.undecided));
    if let Err(e) = run_all::write_outputs(&root, &options.out, &report) {
        eprintln!(
            "error: cannot write the report to {}: {e}",
            options.out.display()
        );
        return ExitCode::from(exit::IO);
    }
    run_all::exit_code(&report, &errors)
}

fn table(b: &Bench) -> String {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    t.set_header(["", "seconds", "goal"]);
    t.add_row([
        "one at a time (--jobs 1)".to_owned(),
        format!("{:.1}", b.serial_wall_seconds),
        String::new(),
    ]);
    t.add_row([
        format!("default schedule ({} side by side)", b.jobs),
        format!("{:.1}", b.wall_seconds),
        format!("< {:.0}", b.goal_wall_seconds),
    ]);
    t.add_row([
        "critical path (exclusive trials + longest shared)".to_owned(),
        format!("{:.1}", b.critical_path_seconds),
        String::new(),
    ]);
    t.add_row([
        "wall / critical path".to_owned(),
        format!("{:.2}", b.critical_path_ratio),
        format!("<= {:.1}", b.goal_ratio),
    ]);
    t.to_string()
}
