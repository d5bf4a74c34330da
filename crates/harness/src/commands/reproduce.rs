//! `casebook reproduce --runs N`: the suite N times in one invocation, each
//! run a whole one, schedule included (unless filtered), so a trial runs
//! beside the neighbours it has in `run-all`. A trial whose
//! hardware-independent outcome (its snapshot view) differs between runs is
//! flaky, which is a bug in its scenario; so is a claim whose verdict
//! differs. The broken variants' reproduction rate is how often each showed
//! its failure. `--from` reads run-all reports of one commit made one at a
//! time (a machine that lends the GPU for less than N runs) instead.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use casebook_model::{ClaimVerdict, Scenario};
use casebook_report::reproduce::{ClaimRuns, Reproduction, TrialRuns};
use casebook_report::{Environment, Exit, Report, TrialId, Verdict};
use casebook_runtime::isolation;

use crate::commands::{self, prepare};
use crate::reporter::{report, snapshot, table};
use crate::runner::{self, Trial, placement};
use crate::workspace;

pub struct Options {
    pub filters: Vec<String>,
    pub out: PathBuf,
    pub runs: usize,
    pub jobs: Option<usize>,
}

pub fn run(catalog: &[Scenario], options: &Options) -> ExitCode {
    let root = workspace::root();
    let prepared = match prepare(catalog, &options.filters, "reproduce") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let jobs = options.jobs.unwrap_or_else(placement::default_jobs);
    let trials = &prepared.trials;
    let mut reports = Vec::new();
    let mut last_errors = Vec::new();
    for n in 1..=options.runs {
        eprintln!("run {n}/{}", options.runs);
        let (report, errors) = commands::execute(
            &root,
            trials,
            prepared.environment.clone(),
            &prepared.gpus,
            jobs,
        );
        let stop = isolation::interrupted() || !errors.is_empty();
        reports.push(report);
        last_errors = errors;
        if stop {
            break;
        }
    }
    let result = summarize(trials, &reports, prepared.environment.clone(), jobs);
    if let Err(code) = print_and_write(&result, &options.out) {
        return code;
    }
    let Some(report) = reports.pop() else {
        return Exit::Io.into();
    };
    // The last run's report is written whatever happened, partial or not.
    let out = &options.out;
    if let Err(code) = commands::write("the report", out, || {
        report::write_outputs(&root, out, &report)
    }) {
        return code;
    }
    if report.run.interrupted.is_none() && last_errors.is_empty() && result.flaky() {
        return Exit::Flaky.into();
    }
    commands::exit_code(&report, &last_errors)
}

/// `casebook reproduce --from REPORT...`: the same comparison, from run-all
/// reports of one commit (each a whole run) made one at a time. Reports of
/// different commits, or built from uncommitted changes, are refused: their
/// outcomes may differ for a reason other than chance.
pub fn from_reports(catalog: &[Scenario], paths: &[PathBuf], out: &std::path::Path) -> ExitCode {
    let mut reports = Vec::new();
    for path in paths {
        let read = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<Report>(&t).map_err(|e| e.to_string()));
        match read {
            Ok(r) => reports.push(r),
            Err(e) => {
                eprintln!("error: {} is not a run-all report: {e}", path.display());
                return Exit::CannotMerge.into();
            }
        }
    }
    if let Err(e) = same_commit(&reports, paths) {
        eprintln!("error: {e}");
        return Exit::CannotMerge.into();
    }
    let Some(first) = reports.first() else {
        eprintln!("error: no report given");
        return Exit::CannotMerge.into();
    };
    let trials = runner::select(catalog, &[]);
    let result = summarize(&trials, &reports, first.environment.clone(), first.run.jobs);
    if let Err(code) = print_and_write(&result, out) {
        return code;
    }
    if result.flaky() {
        Exit::Flaky.into()
    } else {
        ExitCode::SUCCESS
    }
}

/// Every report is of one commit, built from it unchanged.
fn same_commit(reports: &[Report], paths: &[PathBuf]) -> Result<(), String> {
    let first = reports.first().ok_or("no report given")?;
    for (r, path) in reports.iter().zip(paths) {
        if r.source.dirty {
            return Err(format!(
                "{} was built from uncommitted changes",
                path.display()
            ));
        }
        if r.source.commit != first.source.commit {
            return Err(format!(
                "{} is of commit {}, the first report of {}",
                path.display(),
                r.source.commit,
                first.source.commit
            ));
        }
    }
    Ok(())
}

/// Compares the runs' outcomes, trial by trial and claim by claim.
pub fn summarize(
    trials: &[Trial],
    reports: &[Report],
    environment: Environment,
    jobs: usize,
) -> Reproduction {
    // Per trial: the serialised view of each run, and how many passed.
    let mut seen: BTreeMap<TrialId, (Vec<String>, usize)> = BTreeMap::new();
    let mut verdicts: BTreeMap<String, Vec<ClaimVerdict>> = BTreeMap::new();
    for report in reports {
        for r in &report.results {
            let entry = seen.entry(r.trial()).or_default();
            entry.1 += usize::from(r.verdict == Verdict::Pass);
            for c in &r.claims {
                verdicts.entry(c.id.clone()).or_default().push(c.verdict);
            }
        }
        for (t, view) in report_views(trials, report) {
            seen.entry(t).or_default().0.push(view);
        }
    }
    let rows: Vec<TrialRuns> = trials
        .iter()
        .filter(|t| seen.contains_key(&t.name()))
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
    let differing: Vec<TrialId> = rows
        .iter()
        .filter(|r| r.distinct_outcomes > 1 || r.runs != reports.len())
        .map(|r| r.trial.clone())
        .collect();
    let differing_claims: Vec<ClaimRuns> = verdicts
        .into_iter()
        .filter(|(_, v)| v.len() != reports.len() || v.iter().any(|x| x != &v[0]))
        .map(|(claim, verdicts)| ClaimRuns { claim, verdicts })
        .collect();
    let commit = reports.first().map(|r| r.source.commit.clone());
    Reproduction {
        environment,
        runs: reports.len(),
        jobs,
        wall_seconds: reports.iter().map(|r| r.wall_seconds).collect(),
        trials: rows,
        differing,
        differing_claims,
        commit,
    }
}

fn print_and_write(result: &Reproduction, out: &std::path::Path) -> Result<(), ExitCode> {
    println!("{}", table::reproduction(result));
    println!(
        "{} runs; {} trial(s) with outcomes that differ between runs{}; {} claim(s) with \
         verdicts that differ{}",
        result.runs,
        result.differing.len(),
        if result.differing.is_empty() {
            String::new()
        } else {
            format!(": {}", result.differing_text())
        },
        result.differing_claims.len(),
        if result.differing_claims.is_empty() {
            String::new()
        } else {
            format!(": {}", result.differing_claims_text())
        }
    );
    commands::write("the reproduction", out, || {
        report::write_json(out, "reproduce.json", result)
    })
}

/// Each finished trial's snapshot view, serialised: what must not change.
fn report_views(trials: &[Trial], report: &Report) -> Vec<(TrialId, String)> {
    report
        .results
        .iter()
        .filter_map(|r| {
            let t = trials
                .iter()
                .find(|t| t.scenario.slug == r.scenario && t.variant.name == r.variant)?;
            let judgement = crate::judge::judge(t.variant, &r.outcome);
            let claims = crate::judge::claims(t.scenario, t.variant, &r.outcome);
            let view =
                snapshot::SnapshotView::new(t.scenario, t.variant, &r.outcome, &judgement, &claims);
            Some((t.name(), serde_json::to_string(&view).ok()?))
        })
        .collect()
}
