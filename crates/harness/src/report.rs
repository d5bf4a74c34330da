//! The run report's forms: the table printed at the end of a run, the
//! Markdown page and JUnit XML written beside `report.json`, and the
//! report of a nextest shard collected from its trials' results. The
//! report's data types are `casebook-report`'s.

use std::fmt::Write as _;

use comfy_table::{Table, presets};

pub use casebook_report::run::*;
use casebook_report::{Environment, Verdict};

use crate::trial::TrialRecord;

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
pub fn source_from_git(root: &std::path::Path) -> Option<Source> {
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

/// The entry of a finished trial, whose snapshot came out as `snapshot`.
pub fn entry(record: &TrialRecord, snapshot: SnapshotStatus) -> ResultEntry {
    let view = &record.view;
    ResultEntry {
        scenario: view.scenario.clone(),
        variant: view.variant.clone(),
        role: view.role,
        binding: view.binding,
        expected: view.expected.clone(),
        observed: view.observed.clone(),
        verdict: record.judgement.verdict,
        reason: record.judgement.reason.clone(),
        symptoms: record.judgement.observed.clone(),
        claims: record.claims.clone(),
        snapshot,
        seconds: record.outcome.seconds,
        gpu: record.gpu,
        outcome: record.outcome.clone(),
    }
}

/// The table printed at the end of a run.
pub fn table(report: &Report, preset: &str) -> String {
    let mut table = Table::new();
    table.load_preset(preset);
    let several = report.run.gpus.len() > 1;
    let mut header = vec![
        "scenario", "variant", "expected", "observed", "verdict", "time",
    ];
    if several {
        header.push("GPU");
    }
    table.set_header(header);
    for r in &report.results {
        let mut row = vec![
            r.scenario.clone(),
            r.variant.clone(),
            r.expected.clone(),
            r.observed.clone(),
            r.verdict.shown().to_owned(),
            format!("{:.2} s", r.seconds),
        ];
        if several {
            row.push(r.gpu.map(|g| g.to_string()).unwrap_or_default());
        }
        table.add_row(row);
    }
    table.to_string()
}

/// `report.md`.
pub fn markdown(report: &Report) -> String {
    let env = &report.environment;
    let mut md = String::new();
    let _ = writeln!(md, "# cuda-casebook run of {}\n", report.created);
    let _ = writeln!(
        md,
        "- GPU: {} (compute {}, {} device(s), {:.1} GiB)\n- Driver: {} (CUDA {})\n- Toolkit: {}\n- Wall time: {:.1} s\n- Trials: {} passed, {} failed; snapshots new or changed: {}\n",
        env.gpu,
        env.compute_capability,
        env.device_count,
        env.memory_total_bytes as f64 / (1u64 << 30) as f64,
        env.driver,
        env.cuda,
        env.toolkit,
        report.wall_seconds,
        report.summary.passed,
        report.summary.failed,
        report.summary.snapshots_changed,
    );
    if let Some(torch) = &report.run.pytorch {
        let _ = writeln!(md, "- PyTorch: {torch}\n");
    }
    md.push_str(&table(report, presets::ASCII_MARKDOWN));
    md.push('\n');
    let claims: Vec<_> = report
        .results
        .iter()
        .flat_map(|r| r.claims.iter().map(move |c| (r, c)))
        .collect();
    if !claims.is_empty() {
        md.push_str("\n## Claims decided by this run\n\n");
        for (r, c) in claims {
            let _ = writeln!(md, "- `{}`: {:?}, from {}", c.id, c.verdict, r.trial());
        }
    }
    if !report.run.skipped.is_empty() {
        md.push_str("\n## Skipped (not run)\n\n");
        for s in &report.run.skipped {
            let _ = writeln!(md, "- `{}`: {}", s.trial, s.reason);
        }
    }
    if let Some(signal) = &report.run.interrupted {
        let not_run: Vec<String> = report.run.not_run.iter().map(|t| t.to_string()).collect();
        let _ = writeln!(
            md,
            "\n## Interrupted by {signal}\n\nNot run: {}",
            not_run.join(", ")
        );
    }
    if !report.run.leftovers.is_empty() {
        md.push_str("\n## Memory left held\n\n");
        for l in &report.run.leftovers {
            let _ = writeln!(md, "- {l}");
        }
    }
    let failures: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::Fail)
        .collect();
    if !failures.is_empty() {
        md.push_str("\n## Failures\n\n");
        for r in failures {
            let _ = writeln!(md, "- {}: {}", r.trial(), r.reason.as_deref().unwrap_or(""));
        }
    }
    md
}

/// What a person needs to see when a trial fails: why, the first failed
/// call, the error, and the end of what the child printed.
pub fn failure_details(record: &TrialRecord) -> String {
    let mut text = record.judgement.reason.clone().unwrap_or_default();
    let o = &record.outcome;
    let _ = write!(text, "\n  termination: {}", o.termination);
    if let Some(step) = o.first_error() {
        let _ = write!(
            text,
            "\n  first failed call: {} -> {}",
            step.call, step.result
        );
    }
    if let Some(error) = &o.error {
        let _ = write!(text, "\n  error: {error}");
    }
    if !o.stderr_tail.is_empty() {
        let last: Vec<&str> = o.stderr_tail.lines().rev().take(15).collect();
        let _ = write!(text, "\n  output (last lines):");
        for line in last.into_iter().rev() {
            let _ = write!(text, "\n    {line}");
        }
    }
    text
}

/// The run as JUnit XML, for CI systems: one test case per trial, named
/// by its [`casebook_report::TrialId`]; a failed expectation is a failure
/// with its reason.
pub fn junit(report: &Report) -> String {
    use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new("cuda-casebook");
    for r in &report.results {
        let status = match r.verdict {
            Verdict::Pass => TestCaseStatus::success(),
            Verdict::Fail => {
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(r.reason.clone().unwrap_or_default());
                status.set_description(format!("expected {}, observed {}", r.expected, r.observed));
                status
            }
        };
        let mut case = TestCase::new(r.trial().to_string(), status);
        case.set_classname(r.scenario.clone());
        case.set_time(std::time::Duration::from_secs_f64(r.seconds));
        suite.add_test_case(case);
    }
    for skipped in &report.run.skipped {
        let mut status = TestCaseStatus::skipped();
        status.set_message(format!("skipped: {}", skipped.reason));
        let mut case = TestCase::new(skipped.trial.to_string(), status);
        case.set_classname(skipped.trial.scenario.clone());
        suite.add_test_case(case);
    }
    for trial in &report.run.not_run {
        let mut status = TestCaseStatus::skipped();
        status.set_message(format!(
            "not run: the run was interrupted by {}",
            report.run.interrupted.as_deref().unwrap_or("a signal")
        ));
        let mut case = TestCase::new(trial.to_string(), status);
        case.set_classname(trial.scenario.clone());
        suite.add_test_case(case);
    }
    suite.set_time(std::time::Duration::from_secs_f64(report.wall_seconds));
    let mut junit =
        quick_junit::Report::new(format!("cuda-casebook on {}", report.environment.gpu));
    junit.add_test_suite(suite);
    junit.to_string().unwrap_or_default()
}

/// A report made from the results the snapshot suite's trials wrote (see
/// [`crate::suite::RESULTS_ENV`]), in `order` (trial names, the
/// catalogue's): what a nextest shard ran, as run-all would have reported
/// it. The wall time is the span from the first trial's start to the last
/// one's end, by the files' times.
pub fn collect(
    dir: &std::path::Path,
    order: &[casebook_report::TrialId],
    environment: Environment,
) -> std::io::Result<Report> {
    let mut entries = Vec::new();
    let (mut first, mut last) = (None::<std::time::SystemTime>, None::<std::time::SystemTime>);
    for file in std::fs::read_dir(dir)? {
        let path = file?.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        let entry: ResultEntry = serde_json::from_str(&text).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: not a trial's result: {e}", path.display()),
            )
        })?;
        let ended = std::fs::metadata(&path)?.modified()?;
        let started = ended
            .checked_sub(std::time::Duration::from_secs_f64(entry.seconds.max(0.0)))
            .unwrap_or(ended);
        first = Some(first.map_or(started, |f| f.min(started)));
        last = Some(last.map_or(ended, |l| l.max(ended)));
        entries.push(entry);
    }
    let position = |e: &ResultEntry| {
        let trial = e.trial();
        order.iter().position(|t| *t == trial).unwrap_or(usize::MAX)
    };
    entries.sort_by_key(position);
    let wall = match (first, last) {
        (Some(f), Some(l)) => l.duration_since(f).unwrap_or_default().as_secs_f64(),
        _ => 0.0,
    };
    Ok(new(environment, entries, wall))
}

#[cfg(test)]
mod tests {
    use casebook_model::{Binding, Outcome, Role};
    use casebook_report::run::fixture::environment;

    use super::*;

    fn entry(variant: &str, verdict: Verdict) -> ResultEntry {
        ResultEntry {
            scenario: "missing-free".into(),
            variant: variant.into(),
            role: Role::Broken,
            binding: Binding::Cudarc,
            expected: "fails: CUDA_ERROR_OUT_OF_MEMORY".into(),
            observed: "clean".into(),
            verdict,
            reason: (verdict == Verdict::Fail).then(|| "the bug no longer reproduces".into()),
            symptoms: vec![],
            claims: vec![],
            snapshot: SnapshotStatus::Matched,
            seconds: 0.5,
            gpu: None,
            outcome: Outcome::empty(),
        }
    }

    #[test]
    fn junit_has_a_case_per_trial_and_failures_with_their_reason() {
        let env = environment("GPU");
        let report = Report::new(
            Source::default(),
            env,
            vec![
                entry("fixed", Verdict::Pass),
                entry("broken", Verdict::Fail),
            ],
            1.0,
        );
        let xml = junit(&report);
        assert!(xml.contains(r#"name="missing-free::fixed""#), "{xml}");
        assert!(xml.contains(r#"name="missing-free::broken""#), "{xml}");
        assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
        assert!(xml.contains("the bug no longer reproduces"), "{xml}");
        assert_eq!(report.summary.failed, 1);
    }

    #[test]
    fn a_shard_report_is_collected_from_its_trials_results_in_catalogue_order() {
        let dir = tempfile::tempdir().unwrap();
        let entry = |scenario: &str, variant: &str| {
            let mut e: ResultEntry = serde_json::from_value(serde_json::json!({
                "scenario": scenario, "variant": variant, "role": "fixed", "binding": "cudarc",
                "expected": "clean", "observed": "clean", "verdict": "pass", "reason": null,
                "symptoms": [], "claims": [], "snapshot": "matched", "seconds": 1.5,
                "outcome": casebook_model::Outcome::empty(),
            }))
            .unwrap();
            e.seconds = 1.5;
            e
        };
        crate::suite::write_result(dir.path(), &entry("b", "fixed")).unwrap();
        crate::suite::write_result(dir.path(), &entry("a", "fixed")).unwrap();
        let order: Vec<casebook_report::TrialId> =
            vec!["a::fixed".parse().unwrap(), "b::fixed".parse().unwrap()];
        let env = environment("NVIDIA H200");
        let r = collect(dir.path(), &order, env.clone()).unwrap();
        let names: Vec<casebook_report::TrialId> = r.results.iter().map(|e| e.trial()).collect();
        assert_eq!(names, order);
        assert_eq!((r.summary.trials, r.summary.passed), (2, 2));
        assert!(r.wall_seconds >= 1.5, "{}", r.wall_seconds);
        // A file that is no result is named.
        std::fs::write(dir.path().join("junk.json"), "{}").unwrap();
        let e = collect(dir.path(), &order, env).unwrap_err().to_string();
        assert!(e.contains("junk.json: not a trial's result"), "{e}");
    }
}
