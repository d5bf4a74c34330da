//! `casebook reproduce --runs N`: the suite N times in one invocation. A
//! trial whose hardware-independent outcome (its snapshot view) differs
//! between runs is flaky, which is a bug in its scenario; the broken
//! variants' reproduction rate is how often each showed its failure.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use casebook_model::{Role, Scenario};
use comfy_table::{Table, presets};
use serde::{Deserialize, Serialize};

use crate::environment::Environment;
use crate::judge::Verdict;
use crate::run_all::{self, exit};
use crate::{isolation, schedule, workspace};

/// Exit code when some trial's outcome differed between runs.
pub const FLAKY: u8 = 12;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reproduction {
    pub environment: Environment,
    pub runs: usize,
    pub jobs: usize,
    pub wall_seconds: Vec<f64>,
    pub trials: Vec<TrialRuns>,
    /// The trials whose outcome was not the same in every run.
    pub differing: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialRuns {
    pub trial: String,
    pub role: Role,
    /// Runs that reached their end.
    pub runs: usize,
    /// Runs in which the trial met its expectation; for a broken variant,
    /// the runs that reproduced the failure.
    pub passed: usize,
    /// Distinct hardware-independent outcomes seen.
    pub distinct_outcomes: usize,
}

pub struct Options {
    pub filters: Vec<String>,
    pub out: PathBuf,
    pub runs: usize,
    pub jobs: Option<usize>,
}

pub fn run(catalog: &[Scenario], options: &Options) -> ExitCode {
    let root = workspace::root();
    let prepared = match run_all::prepare(catalog, &options.filters, "reproduce") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let jobs = options.jobs.unwrap_or_else(schedule::default_jobs);
    let trials = &prepared.trials;
    // Per trial: the serialised view of each run, and how many passed.
    let mut seen: BTreeMap<String, (Vec<String>, usize)> = BTreeMap::new();
    let mut walls = Vec::new();
    let mut last = None;
    for n in 1..=options.runs {
        eprintln!("run {n}/{}", options.runs);
        let (report, errors) = run_all::execute(
            &root,
            trials,
            prepared.environment.clone(),
            &prepared.gpus,
            jobs,
        );
        walls.push(report.wall_seconds);
        for r in &report.results {
            let entry = seen
                .entry(format!("{}::{}", r.scenario, r.variant))
                .or_default();
            entry.1 += usize::from(r.verdict == Verdict::Pass);
        }
        for (t, view) in report_views(trials, &report) {
            seen.entry(t).or_default().0.push(view);
        }
        let stop = isolation::interrupted() || !errors.is_empty();
        last = Some((report, errors));
        if stop {
            break;
        }
    }
    let rows: Vec<TrialRuns> = trials
        .iter()
        .map(|t| {
            let name = t.name();
            let (views, passed) = seen.get(&name).cloned().unwrap_or_default();
            let mut distinct = views.clone();
            distinct.sort();
            distinct.dedup();
            TrialRuns {
                role: t.variant.role,
                runs: views.len(),
                passed,
                distinct_outcomes: distinct.len(),
                trial: name,
            }
        })
        .collect();
    let differing: Vec<String> = rows
        .iter()
        .filter(|r| r.distinct_outcomes > 1)
        .map(|r| r.trial.clone())
        .collect();
    let result = Reproduction {
        environment: prepared.environment.clone(),
        runs: walls.len(),
        jobs,
        wall_seconds: walls,
        trials: rows,
        differing,
    };
    println!("{}", table(&result));
    println!(
        "{} runs; {} trial(s) with outcomes that differ between runs{}",
        result.runs,
        result.differing.len(),
        if result.differing.is_empty() {
            String::new()
        } else {
            format!(": {}", result.differing.join(", "))
        }
    );
    let written = std::fs::create_dir_all(&options.out).and_then(|()| {
        std::fs::write(
            options.out.join("reproduce.json"),
            serde_json::to_string_pretty(&result)? + "\n",
        )
    });
    if let Err(e) = written {
        eprintln!("error: cannot write {}: {e}", options.out.display());
        return ExitCode::from(exit::IO);
    }
    let Some((report, errors)) = last else {
        return ExitCode::from(exit::IO);
    };
    // The last run's report is written whatever happened, partial or not.
    if let Err(e) = run_all::write_outputs(&root, &options.out, &report) {
        eprintln!(
            "error: cannot write the report to {}: {e}",
            options.out.display()
        );
        return ExitCode::from(exit::IO);
    }
    if report.run.interrupted.is_none() && errors.is_empty() && !result.differing.is_empty() {
        return ExitCode::from(FLAKY);
    }
    run_all::exit_code(&report, &errors)
}

/// Each finished trial's snapshot view, serialised: what must not change.
fn report_views(
    trials: &[schedule::Trial],
    report: &crate::report::Report,
) -> Vec<(String, String)> {
    report
        .results
        .iter()
        .filter_map(|r| {
            let t = trials
                .iter()
                .find(|t| t.scenario.slug == r.scenario && t.variant.name == r.variant)?;
            let judgement = crate::judge::judge(t.variant, &r.outcome);
            let claims = crate::judge::claims(t.scenario, t.variant, &r.outcome);
            let view = crate::snapshot::SnapshotView::new(
                t.scenario, t.variant, &r.outcome, &judgement, &claims,
            );
            Some((t.name(), serde_json::to_string(&view).ok()?))
        })
        .collect()
}

fn table(r: &Reproduction) -> String {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    t.set_header(["trial", "role", "expectation met", "distinct outcomes"]);
    for row in &r.trials {
        let role = match row.role {
            Role::Broken => "broken",
            Role::Fixed => "fixed",
            Role::AsWritten => "as written",
            Role::Contrast => "contrast",
        };
        t.add_row([
            row.trial.clone(),
            role.to_owned(),
            format!("{}/{}", row.passed, row.runs),
            row.distinct_outcomes.to_string(),
        ]);
    }
    t.to_string()
}
