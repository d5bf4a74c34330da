//! The run report: JSON with every raw figure and the environment
//! fingerprint, a Markdown page, and the table printed at the end of a run.

use std::fmt::Write as _;

use casebook_model::{Binding, Outcome, Role, Symptom};
use comfy_table::{Table, presets};
use serde::{Deserialize, Serialize};

use crate::environment::Environment;
use crate::judge::{ClaimResult, Verdict};
use crate::snapshot::SnapshotStatus;
use crate::trial::TrialRecord;

/// Where the report of the newest full GPU run is committed.
pub const EVIDENCE_JSON: &str = "docs/evidence/latest.json";

/// What a run's binaries were built from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// The commit, or `unknown` where neither the bundle nor git says.
    pub commit: String,
    /// The working tree had uncommitted changes.
    pub dirty: bool,
}

/// The file `cargo xtask bundle` writes beside the binaries it builds.
pub const SOURCE_FILE: &str = "source.json";

impl Source {
    /// From the `source.json` beside this binary (a bundle), else from git
    /// in the repository (a build run in place), else unknown.
    pub fn of_this_build() -> Source {
        let beside = std::env::current_exe()
            .ok()
            .and_then(|exe| std::fs::read_to_string(exe.with_file_name(SOURCE_FILE)).ok())
            .and_then(|text| serde_json::from_str(&text).ok());
        beside
            .or_else(|| Source::from_git(&crate::workspace::root()))
            .unwrap_or_else(|| Source {
                commit: "unknown".into(),
                dirty: false,
            })
    }

    /// `git rev-parse HEAD` and `git status --porcelain` in `root`.
    pub fn from_git(root: &std::path::Path) -> Option<Source> {
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

    /// `4068e38`, or `4068e38 with uncommitted changes`.
    pub fn short(&self) -> String {
        let commit: String = self.commit.chars().take(7).collect();
        if self.dirty {
            format!("{commit} with uncommitted changes")
        } else {
            commit
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub schema: u32,
    /// RFC 3339, UTC.
    pub created: String,
    pub casebook_version: String,
    /// The commit the binaries were built from, and whether the tree had
    /// changes on top of it.
    #[serde(default)]
    pub source: Source,
    pub environment: Environment,
    pub wall_seconds: f64,
    pub summary: Summary,
    pub results: Vec<ResultEntry>,
    /// How the run went: jobs, interruption, trials not run, memory left held.
    #[serde(default)]
    pub run: RunFacts,
    /// Set by `casebook bench`: the schedule against its critical path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<crate::bench::Bench>,
}

/// A trial not started, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// `<slug>::<variant>`.
    pub trial: String,
    pub reason: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunFacts {
    /// Trials run side by side at most (memory-exclusive ones always alone).
    pub jobs: usize,
    /// The signal that interrupted the run, if one did.
    pub interrupted: Option<String>,
    /// `<slug>::<variant>` of the trials that did not run to their end.
    pub not_run: Vec<String>,
    /// Trials that were not started because something they need is missing
    /// here (PyTorch with CUDA), with the reason: not run, never passed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    /// The PyTorch the Python variants ran under (`2.11.0+cu130, CUDA 13.0`),
    /// when any did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pytorch: Option<String>,
    /// The GPUs the trials were spread over (each entry's `gpu` names one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<crate::gpus::Gpu>,
    /// Trials of an ended run still on a GPU when this one started: the
    /// exclusive trials were not run beside them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orphans: Vec<crate::leftover::Orphan>,
    /// Device memory still in use after a trial, with its holders.
    pub leftovers: Vec<crate::leftover::Leftover>,
    /// Why the leftover-memory check did not run, if it did not.
    pub leftover_check_off: Option<String>,
    /// The shard this run was (`run-all --partition K/N`), if it was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<crate::matrix::Partition>,
    /// The schedule against its floor, from this report's own trial times
    /// (see [`crate::bench::CriticalPath`]); absent where a trial's place is
    /// not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_path: Option<crate::bench::CriticalPath>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Summary {
    pub trials: usize,
    pub passed: usize,
    pub failed: usize,
    pub snapshots_changed: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultEntry {
    pub scenario: String,
    pub variant: String,
    pub role: Role,
    pub binding: Binding,
    pub expected: String,
    pub observed: String,
    pub verdict: Verdict,
    pub reason: Option<String>,
    pub symptoms: Vec<Symptom>,
    pub claims: Vec<ClaimResult>,
    pub snapshot: SnapshotStatus,
    pub seconds: f64,
    /// The GPU (NVML's index) it ran on, where the run pinned its trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
    /// Where run-all's schedule ran it: beside others, beside light trials
    /// only, or alone (the critical path is read from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<crate::schedule::Place>,
    /// Everything recorded, raw figures included.
    pub outcome: Outcome,
}

impl ResultEntry {
    pub fn new(record: &TrialRecord, snapshot: SnapshotStatus) -> Self {
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
            place: None,
            outcome: record.outcome.clone(),
        }
    }
}

impl Report {
    pub fn new(environment: Environment, results: Vec<ResultEntry>, wall_seconds: f64) -> Self {
        let summary = Summary {
            trials: results.len(),
            passed: results
                .iter()
                .filter(|r| r.verdict == Verdict::Pass)
                .count(),
            failed: results
                .iter()
                .filter(|r| r.verdict == Verdict::Fail)
                .count(),
            snapshots_changed: results
                .iter()
                .filter(|r| r.snapshot != SnapshotStatus::Matched)
                .count(),
        };
        Report {
            schema: 1,
            created: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            casebook_version: env!("CARGO_PKG_VERSION").to_owned(),
            source: Source::of_this_build(),
            environment,
            wall_seconds,
            summary,
            results,
            run: RunFacts::default(),
            bench: None,
        }
    }

    /// The table printed at the end of a run.
    pub fn table(&self, preset: &str) -> String {
        let mut table = Table::new();
        table.load_preset(preset);
        let several = self.run.gpus.len() > 1;
        let mut header = vec![
            "scenario", "variant", "expected", "observed", "verdict", "time",
        ];
        if several {
            header.push("GPU");
        }
        table.set_header(header);
        for r in &self.results {
            let verdict = match r.verdict {
                Verdict::Pass => "pass",
                Verdict::Fail => "FAIL",
            };
            let mut row = vec![
                r.scenario.clone(),
                r.variant.clone(),
                r.expected.clone(),
                r.observed.clone(),
                verdict.to_owned(),
                format!("{:.2} s", r.seconds),
            ];
            if several {
                row.push(r.gpu.map(|g| g.to_string()).unwrap_or_default());
            }
            table.add_row(row);
        }
        table.to_string()
    }

    pub fn markdown(&self) -> String {
        let env = &self.environment;
        let mut md = String::new();
        let _ = writeln!(md, "# cuda-casebook run of {}\n", self.created);
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
            self.wall_seconds,
            self.summary.passed,
            self.summary.failed,
            self.summary.snapshots_changed,
        );
        if let Some(torch) = &self.run.pytorch {
            let _ = writeln!(md, "- PyTorch: {torch}\n");
        }
        if let Some(path) = &self.run.critical_path {
            let _ = writeln!(md, "- Schedule: {path}\n");
        }
        md.push_str(&self.table(presets::ASCII_MARKDOWN));
        md.push('\n');
        let claims: Vec<_> = self
            .results
            .iter()
            .flat_map(|r| r.claims.iter().map(move |c| (r, c)))
            .collect();
        if !claims.is_empty() {
            md.push_str("\n## Claims decided by this run\n\n");
            for (r, c) in claims {
                let _ = writeln!(
                    md,
                    "- `{}`: {:?}, from {}::{}",
                    c.id, c.verdict, r.scenario, r.variant
                );
            }
        }
        if !self.run.skipped.is_empty() {
            md.push_str("\n## Skipped (not run)\n\n");
            for s in &self.run.skipped {
                let _ = writeln!(md, "- `{}`: {}", s.trial, s.reason);
            }
        }
        if let Some(signal) = &self.run.interrupted {
            let _ = writeln!(
                md,
                "\n## Interrupted by {signal}\n\nNot run: {}",
                self.run.not_run.join(", ")
            );
        }
        if !self.run.leftovers.is_empty() {
            md.push_str("\n## Memory left held\n\n");
            for l in &self.run.leftovers {
                let _ = writeln!(md, "- {l}");
            }
        }
        let failures: Vec<_> = self
            .results
            .iter()
            .filter(|r| r.verdict == Verdict::Fail)
            .collect();
        if !failures.is_empty() {
            md.push_str("\n## Failures\n\n");
            for r in failures {
                let _ = writeln!(
                    md,
                    "- {}::{}: {}",
                    r.scenario,
                    r.variant,
                    r.reason.as_deref().unwrap_or("")
                );
            }
        }
        md
    }
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

impl Report {
    /// The run as JUnit XML, for CI systems: one test case per trial, named
    /// `<slug>::<variant>`; a failed expectation is a failure with its reason.
    pub fn junit(&self) -> String {
        use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
        let mut suite = TestSuite::new("cuda-casebook");
        for r in &self.results {
            let status = match r.verdict {
                Verdict::Pass => TestCaseStatus::success(),
                Verdict::Fail => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    status.set_message(r.reason.clone().unwrap_or_default());
                    status.set_description(format!(
                        "expected {}, observed {}",
                        r.expected, r.observed
                    ));
                    status
                }
            };
            let mut case = TestCase::new(format!("{}::{}", r.scenario, r.variant), status);
            case.set_classname(r.scenario.clone());
            case.set_time(std::time::Duration::from_secs_f64(r.seconds));
            suite.add_test_case(case);
        }
        for skipped in &self.run.skipped {
            let mut status = TestCaseStatus::skipped();
            status.set_message(format!("skipped: {}", skipped.reason));
            let mut case = TestCase::new(skipped.trial.clone(), status);
            case.set_classname(
                skipped
                    .trial
                    .split("::")
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            );
            suite.add_test_case(case);
        }
        for name in &self.run.not_run {
            let mut status = TestCaseStatus::skipped();
            status.set_message(format!(
                "not run: the run was interrupted by {}",
                self.run.interrupted.as_deref().unwrap_or("a signal")
            ));
            let mut case = TestCase::new(name.clone(), status);
            case.set_classname(name.split("::").next().unwrap_or_default().to_owned());
            suite.add_test_case(case);
        }
        suite.set_time(std::time::Duration::from_secs_f64(self.wall_seconds));
        let mut report =
            quick_junit::Report::new(format!("cuda-casebook on {}", self.environment.gpu));
        report.add_test_suite(suite);
        report.to_string().unwrap_or_default()
    }
}

/// A report made from the results the snapshot suite's trials wrote (see
/// [`crate::suite::RESULTS_ENV`]), in `order` (trial names, the
/// catalogue's): what a nextest shard ran, as run-all would have reported
/// it. The wall time is the span from the first trial's start to the last
/// one's end, by the files' times.
pub fn collect(
    dir: &std::path::Path,
    order: &[String],
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
        let name = format!("{}::{}", e.scenario, e.variant);
        order.iter().position(|n| *n == name).unwrap_or(usize::MAX)
    };
    entries.sort_by_key(position);
    let wall = match (first, last) {
        (Some(f), Some(l)) => l.duration_since(f).unwrap_or_default().as_secs_f64(),
        _ => 0.0,
    };
    Ok(Report::new(environment, entries, wall))
}

#[cfg(test)]
pub(crate) mod tests {
    use casebook_model::{Binding, Outcome, Role};

    use super::*;
    use crate::environment::Environment;

    /// A machine for a test's report: one GPU named `gpu`.
    pub(crate) fn environment(gpu: &str) -> Environment {
        Environment {
            gpu: gpu.into(),
            driver: "580.159.04".into(),
            cuda: "13.0".into(),
            toolkit: "13.0.88".into(),
            compute_capability: "9.0".into(),
            memory_total_bytes: 1,
            device_count: 1,
        }
    }

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
            place: None,
            outcome: Outcome::empty(),
        }
    }

    #[test]
    fn junit_has_a_case_per_trial_and_failures_with_their_reason() {
        let env = environment("GPU");
        let report = Report::new(
            env,
            vec![
                entry("fixed", Verdict::Pass),
                entry("broken", Verdict::Fail),
            ],
            1.0,
        );
        let xml = report.junit();
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
        let order = vec!["a::fixed".to_owned(), "b::fixed".to_owned()];
        let env = environment("NVIDIA H200");
        let r = collect(dir.path(), &order, env.clone()).unwrap();
        let names: Vec<String> = r
            .results
            .iter()
            .map(|e| format!("{}::{}", e.scenario, e.variant))
            .collect();
        assert_eq!(names, order);
        assert_eq!((r.summary.trials, r.summary.passed), (2, 2));
        assert!(r.wall_seconds >= 1.5, "{}", r.wall_seconds);
        // A file that is no result is named.
        std::fs::write(dir.path().join("junk.json"), "{}").unwrap();
        let e = collect(dir.path(), &order, env).unwrap_err().to_string();
        assert!(e.contains("junk.json: not a trial's result"), "{e}");
    }
}
