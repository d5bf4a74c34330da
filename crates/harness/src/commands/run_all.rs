//! `casebook run-all`: every trial on the GPU, a table, the reports, and
//! any new snapshots packed for review.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use casebook_model::Scenario;
use casebook_report::{Exit, Partition};
use comfy_table::presets;

use crate::commands::{self, prepare};
use crate::reporter::table;
use crate::runner::{self, placement};
use crate::workspace;

#[derive(Debug, Clone)]
pub struct Options {
    /// Run only trials whose `<slug>::<variant>` contains one of these.
    pub filters: Vec<String>,
    /// Where `report.json`, `report.md`, `junit.xml` and `snapshots.tar` go.
    pub out: PathBuf,
    /// The claims of the ledger that no scenario decides: (untestable, not yet tested).
    pub undecided: (usize, usize),
    /// Trials side by side at most; `None` for [`placement::default_jobs`].
    pub jobs: Option<usize>,
    /// Run only this shard of the catalogue.
    pub partition: Option<Partition>,
    /// Run only these trials, by their whole names (`run-all --trials FILE`).
    pub trials: Option<Vec<String>>,
}

pub fn run(catalog: &[Scenario], options: &Options) -> ExitCode {
    let root = workspace::root();
    if let Some(named) = &options.trials {
        let unknown = unknown_trials(catalog, named);
        if !unknown.is_empty() {
            eprintln!(
                "error: the catalogue has no trial {} (see `casebook list`)",
                unknown.join(", ")
            );
            return Exit::NoMatch.into();
        }
    }
    let mut prepared = match prepare(catalog, &options.filters, "run-all") {
        Ok(p) => p,
        Err(code) => return code,
    };
    if let Some(named) = &options.trials {
        let named: HashSet<&str> = named.iter().map(String::as_str).collect();
        prepared
            .trials
            .retain(|t| named.contains(t.name().to_string().as_str()));
        prepared
            .skipped
            .retain(|s| named.contains(s.trial.to_string().as_str()));
        if prepared.trials.is_empty() && prepared.skipped.is_empty() {
            eprintln!("error: no trial of the list matches {:?}", options.filters);
            return Exit::NoMatch.into();
        }
    }
    if let Some(shard) = options.partition {
        let held = runner::in_shard(catalog, shard);
        prepared.trials.retain(|t| held(&t.name()));
        prepared.skipped.retain(|s| held(&s.trial));
        eprintln!(
            "shard {shard}: {} trial(s) of the catalogue's {}",
            prepared.trials.len() + prepared.skipped.len(),
            runner::select(catalog, &[]).len()
        );
    }
    let jobs = options.jobs.unwrap_or_else(placement::default_jobs);
    let (mut report, start_errors) = commands::execute(
        &root,
        &prepared.trials,
        prepared.environment,
        &prepared.gpus,
        jobs,
    );
    report.run.skipped.splice(0..0, prepared.skipped);
    report.run.partition = options.partition;
    if prepared.trials.iter().any(|t| t.variant.needs_torch()) {
        report.run.pytorch = crate::pytorch::available().as_ref().ok().cloned();
    }
    println!("{}", table::run(&report, presets::UTF8_FULL_CONDENSED));
    println!(
        "{} passed, {} failed, {} skipped, {} not run; {} snapshot(s) new or changed; {:.1} s",
        report.summary.passed,
        report.summary.failed,
        report.run.skipped.len(),
        report.run.not_run.len(),
        report.summary.snapshots_changed,
        report.wall_seconds
    );
    if let Some(path) = &report.run.critical_path {
        println!("schedule: {path}");
    }
    println!("{}", table::claims_line(&report, options.undecided));
    if let Some(off) = &report.run.leftover_check_off {
        eprintln!("warning: the leftover-memory check did not run: {off}");
    }
    commands::finish(&root, &options.out, &report, &start_errors)
}

/// The names of a trial list (`run-all --trials`) that name no trial of
/// the catalogue.
pub fn unknown_trials(catalog: &[Scenario], named: &[String]) -> Vec<String> {
    let known: HashSet<String> = runner::select(catalog, &[])
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    named
        .iter()
        .filter(|n| !known.contains(n.as_str()))
        .cloned()
        .collect()
}

/// Reads a trial list: one `<slug>::<variant>` a line; blank lines and
/// lines that start with `#` are not names.
pub fn read_trial_list(path: &Path) -> std::io::Result<Vec<String>> {
    Ok(std::fs::read_to_string(path)?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect())
}
