//! A run's report as the runner makes it: where the binaries came from,
//! each finished trial's entry, and the files written beside it.

use std::path::Path;

use casebook_report::Environment;
use casebook_report::run::{Report, ResultEntry, SOURCE_FILE, SnapshotStatus, Source};

use crate::judge::observed_text;
use crate::reporter::{junit, markdown, snapshot};
use crate::runner::dispatch::Trial;
use crate::runner::executor::TrialRecord;

/// What this binary was built from: the `source.json` beside it (a
/// bundle), else git in the repository (a build run in place), else
/// unknown.
pub fn source_of_this_build() -> Source {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| std::fs::read_to_string(exe.with_file_name(SOURCE_FILE)).ok())
        .and_then(|text| serde_json::from_str(&text).ok());
    beside
        .or_else(|| source_from_git(&crate::workspace::root()))
        .unwrap_or_else(|| Source {
            commit: "unknown".into(),
            dirty: false,
        })
}

/// `git rev-parse HEAD` and `git status --porcelain` in `root`.
pub fn source_from_git(root: &Path) -> Option<Source> {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    Some(Source {
        commit: git(&["rev-parse", "HEAD"])?,
        dirty: !git(&["status", "--porcelain", "--untracked-files=no"])?.is_empty(),
    })
}

/// A report of `results` made now, by this build.
pub fn new(environment: Environment, results: Vec<ResultEntry>, wall_seconds: f64) -> Report {
    Report::new(source_of_this_build(), environment, results, wall_seconds)
}

/// The entry of `trial`'s finished run, whose snapshot came out as
/// `snapshot`.
pub fn entry(trial: Trial, record: &TrialRecord, snapshot: SnapshotStatus) -> ResultEntry {
    ResultEntry {
        scenario: trial.scenario.slug.to_owned(),
        variant: trial.variant.name.to_owned(),
        role: trial.variant.role,
        binding: trial.variant.binding,
        expected: trial.variant.expected_text(),
        observed: observed_text(&record.judgement),
        verdict: record.judgement.verdict,
        reason: record.judgement.reason.clone(),
        symptoms: record.judgement.observed.clone(),
        claims: record.claims.clone(),
        snapshot,
        seconds: record.outcome.seconds,
        gpu: record.gpus.first().copied(),
        pair_gpu: record.gpus.get(1).copied(),
        place: None,
        outcome: record.outcome.clone(),
        from: None,
    }
}

/// Writes `value` as `out/file`, pretty, ending in a newline, making `out`
/// if it is not there.
pub fn write_json(out: &Path, file: &str, value: &impl serde::Serialize) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join(file), serde_json::to_string_pretty(value)? + "\n")
}

/// Writes `report.json`, `report.md` and `junit.xml` into `out`, and packs
/// the snapshots a run left to review into `out/snapshots.tar`.
pub fn write_outputs(root: &Path, out: &Path, report: &Report) -> std::io::Result<()> {
    write_json(out, "report.json", report)?;
    std::fs::write(out.join("report.md"), markdown::markdown(report))?;
    std::fs::write(out.join("junit.xml"), junit::junit(report))?;
    let ran: Vec<(String, String)> = report
        .results
        .iter()
        .filter(|r| r.snapshot != SnapshotStatus::Matched)
        .map(|r| (r.scenario.clone(), r.variant.clone()))
        .collect();
    snapshot::pack_snapshots(root, out, &ran)?;
    eprintln!("report: {}", out.join("report.json").display());
    Ok(())
}
