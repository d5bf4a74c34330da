//! `casebook bench`: how close the default schedule comes to its floor,
//! and what more GPUs give. One invocation runs the trials twice: first a
//! baseline (one trial at a time on one GPU; or, where several GPUs are
//! visible, the default schedule on the first of them alone), then the
//! default schedule on every visible GPU. The ratios of wall time to the
//! critical path ([`CriticalPath`], which every run-all report carries,
//! read from its own per-trial times) and to the baseline go into the
//! report.

use std::path::PathBuf;
use std::process::ExitCode;

use casebook_model::Scenario;
use comfy_table::{Table, presets};
use serde::{Deserialize, Serialize};

use crate::report::Report;
use crate::run_all::{self, exit};
use crate::schedule::Place;
use crate::{isolation, schedule, workspace};

/// The goals: the default schedule within this of its critical path…
pub const GOAL_RATIO: f64 = 1.1;
/// …the catalogue of dacd71a's trials (`docs/evidence/trials-dacd71a.txt`)
/// in at most this on one H100…
pub const GOAL_WALL_SECONDS: f64 = 220.0;
/// …and, on several GPUs, at most this share of the one-GPU wall.
pub const GOAL_GPUS_RATIO: f64 = 0.6;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bench {
    pub jobs: usize,
    /// The GPUs the default schedule spread the trials over.
    #[serde(default)]
    pub gpus: Vec<crate::gpus::Gpu>,
    /// What the baseline run was: "one trial at a time" or "one GPU".
    #[serde(default)]
    pub baseline: String,
    #[serde(alias = "serial_wall_seconds")]
    pub baseline_wall_seconds: f64,
    pub wall_seconds: f64,
    /// Sum of the exclusive trials plus the longest shared one, over the
    /// number of GPUs (never under the longest trial).
    pub critical_path_seconds: f64,
    /// `wall_seconds / critical_path_seconds`.
    pub critical_path_ratio: f64,
    /// `wall_seconds / baseline_wall_seconds`.
    #[serde(default)]
    pub baseline_ratio: f64,
    pub goal_ratio: f64,
    pub goal_wall_seconds: f64,
    #[serde(default)]
    pub goal_gpus_ratio: f64,
    /// Each trial's time in both runs, context creation included.
    pub trials: Vec<BenchTrial>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchTrial {
    pub trial: String,
    pub exclusive: bool,
    /// It ran beside light trials but not beside another like it (it holds
    /// much of the GPU's memory).
    #[serde(default)]
    pub holds: bool,
    #[serde(alias = "serial_seconds")]
    pub baseline_seconds: Option<f64>,
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
    let gpus = &prepared.gpus;
    let jobs = schedule::default_jobs();
    let (baseline_name, baseline_gpus, baseline_jobs) = if gpus.len() > 1 {
        (format!("one GPU ({})", gpus[0]), &gpus[..1], jobs)
    } else {
        ("one trial at a time".to_owned(), &gpus[..], 1)
    };
    eprintln!("bench 1/2: {baseline_name}");
    let (serial, errors) = run_all::execute(
        &root,
        trials,
        prepared.environment.clone(),
        baseline_gpus,
        baseline_jobs,
    );
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
    eprintln!(
        "bench 2/2: the default schedule ({jobs} side by side on each of {} GPU(s))",
        gpus.len().max(1)
    );
    let (mut report, errors) = run_all::execute(&root, trials, prepared.environment, gpus, jobs);
    let seconds = |r: &Report, name: &str| {
        r.results
            .iter()
            .find(|e| format!("{}::{}", e.scenario, e.variant) == name)
            .map(|e| e.seconds)
    };
    let memory = crate::schedule::smallest_memory(gpus);
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
    let path = CriticalPath::of(
        rows.iter().filter_map(|r| {
            let place = match (r.exclusive, r.holds) {
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

/// A schedule against its floor, from a run's own trial times: the trials
/// that ran alone, one after another, plus the longest of those that shared
/// a GPU (or, where they take longer, the trials that hold much memory or
/// create contexts, which run one at a time beside the shared ones), over
/// the GPUs, and never under the longest trial. No schedule of the same
/// trials at the same times finishes sooner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriticalPath {
    /// The trials that ran alone, one after another.
    pub exclusive_seconds: f64,
    /// The longest trial that shared a GPU (beside others or beside light
    /// trials only).
    pub longest_shared_seconds: f64,
    /// The trials that ran beside light trials only, one after another.
    pub holds_seconds: f64,
    pub gpus: usize,
    /// The floor: `(exclusive + max(longest shared, holds)) / gpus`, at
    /// least the longest trial.
    pub seconds: f64,
    pub wall_seconds: f64,
    /// `wall_seconds / seconds`.
    pub ratio: f64,
}

impl CriticalPath {
    /// From each trial's place and seconds, on `gpus` GPUs (none counts as
    /// one), for a run that took `wall_seconds`.
    pub fn of(
        trials: impl IntoIterator<Item = (Place, f64)>,
        gpus: usize,
        wall_seconds: f64,
    ) -> CriticalPath {
        let (mut exclusive, mut longest_shared, mut holds, mut longest) = (0.0, 0.0, 0.0, 0.0f64);
        for (place, seconds) in trials {
            longest = longest.max(seconds);
            match place {
                Place::Alone => exclusive += seconds,
                Place::Holds => {
                    holds += seconds;
                    longest_shared = f64::max(longest_shared, seconds);
                }
                Place::Shared => longest_shared = f64::max(longest_shared, seconds),
            }
        }
        let gpus = gpus.max(1);
        let seconds = ((exclusive + f64::max(longest_shared, holds)) / gpus as f64).max(longest);
        CriticalPath {
            exclusive_seconds: exclusive,
            longest_shared_seconds: longest_shared,
            holds_seconds: holds,
            gpus,
            seconds,
            wall_seconds,
            ratio: wall_seconds / seconds,
        }
    }

    /// From a run-all report, where every trial's place is recorded.
    pub fn of_report(report: &Report) -> Option<CriticalPath> {
        let trials: Option<Vec<(Place, f64)>> = report
            .results
            .iter()
            .map(|r| Some((r.place?, r.seconds)))
            .collect();
        let trials = trials.filter(|t| !t.is_empty())?;
        Some(CriticalPath::of(
            trials,
            report.run.gpus.len(),
            report.wall_seconds,
        ))
    }
}

impl std::fmt::Display for CriticalPath {
    /// `201.3 s, 1.07 times its critical path of 188.3 s (the trials that
    /// ran alone, 83.2 s, and the longest shared trial, 105.1 s)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shared = if self.holds_seconds > self.longest_shared_seconds {
            format!(
                "the trials beside light ones only, one after another, {:.1} s",
                self.holds_seconds
            )
        } else {
            format!(
                "the longest shared trial, {:.1} s",
                self.longest_shared_seconds
            )
        };
        let over = if self.gpus > 1 {
            format!(", over {} GPUs", self.gpus)
        } else {
            String::new()
        };
        write!(
            f,
            "{:.1} s, {:.2} times its critical path of {:.1} s (the trials that ran alone, {:.1} s, \
             and {shared}{over})",
            self.wall_seconds, self.ratio, self.seconds, self.exclusive_seconds
        )
    }
}

fn table(b: &Bench) -> String {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    t.set_header(["", "seconds", "goal"]);
    let several = b.gpus.len() > 1;
    t.add_row([
        b.baseline.clone(),
        format!("{:.1}", b.baseline_wall_seconds),
        String::new(),
    ]);
    t.add_row([
        format!(
            "default schedule ({} side by side on {} GPU(s))",
            b.jobs,
            b.gpus.len().max(1)
        ),
        format!("{:.1}", b.wall_seconds),
        if several {
            String::new()
        } else {
            format!("< {:.0}", b.goal_wall_seconds)
        },
    ]);
    if several {
        t.add_row([
            "wall / one-GPU wall".to_owned(),
            format!("{:.2}", b.baseline_ratio),
            format!("<= {:.1}", b.goal_gpus_ratio),
        ]);
    }
    t.add_row([
        "critical path (exclusive trials + the longest shared one or those that hold much memory, one after another; over the GPUs)".to_owned(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_critical_path_is_the_alone_chain_and_the_longest_shared_trial() {
        let trials = [
            (Place::Alone, 10.0),
            (Place::Alone, 20.0),
            (Place::Shared, 50.0),
            (Place::Shared, 5.0),
            (Place::Holds, 15.0),
            (Place::Holds, 15.0),
        ];
        let path = CriticalPath::of(trials, 1, 88.0);
        assert_eq!(path.seconds, 80.0);
        assert_eq!(path.ratio, 1.1);
        assert_eq!(path.holds_seconds, 30.0);
        assert!(
            path.to_string()
                .contains("the longest shared trial, 50.0 s")
        );
        // Trials beside light ones only run one after another: where they
        // take longer than the longest shared trial, they set the floor.
        let holds = [
            (Place::Alone, 10.0),
            (Place::Holds, 40.0),
            (Place::Holds, 30.0),
        ];
        assert_eq!(CriticalPath::of(holds, 1, 80.0).seconds, 80.0);
        // Over two GPUs, but never under the longest trial.
        let two = [(Place::Alone, 10.0), (Place::Shared, 30.0)];
        assert_eq!(CriticalPath::of(two, 2, 30.0).seconds, 30.0);
    }

    #[test]
    fn a_report_without_places_has_no_critical_path() {
        let env = crate::report::tests::environment("GPU");
        let report = Report::new(env, Vec::new(), 1.0);
        assert_eq!(CriticalPath::of_report(&report), None);
    }
}
