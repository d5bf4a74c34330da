//! `casebook run-all`: every trial on the GPU, a table, the reports, and
//! any new snapshots packed for review.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use casebook_model::Scenario;
use comfy_table::presets;

use crate::judge::Verdict;
use crate::report::{Report, ResultEntry};
use crate::snapshot::{self, SnapshotStatus};
use crate::{environment, trial, workspace};

/// Exit codes of `casebook run-all`, each distinct.
pub mod exit {
    /// A trial's expectation failed.
    pub const TRIAL_FAILED: u8 = 1;
    /// No GPU or no driver.
    pub const NO_GPU: u8 = 3;
    /// A filter matched no trial.
    pub const NO_MATCH: u8 = 4;
    /// Every expectation held, but snapshots are new or changed.
    pub const SNAPSHOTS_DIFFER: u8 = 5;
    /// The report could not be written.
    pub const IO: u8 = 6;
}

#[derive(Debug, Clone)]
pub struct Options {
    /// Run only trials whose `<slug>::<variant>` contains one of these.
    pub filters: Vec<String>,
    /// Where `report.json`, `report.md`, `junit.xml` and `snapshots.tar` go.
    pub out: PathBuf,
    /// The claims of the ledger that no scenario decides: (untestable, not yet tested).
    pub undecided: (usize, usize),
}

pub fn run_all(catalog: &[Scenario], options: &Options) -> ExitCode {
    let root = workspace::root();
    let selected: Vec<(&Scenario, usize)> = catalog
        .iter()
        .flat_map(|s| (0..s.variants.len()).map(move |i| (s, i)))
        .filter(|(s, i)| {
            let name = s.trial_name(&s.variants[*i]);
            options.filters.is_empty() || options.filters.iter().any(|f| name.contains(f.as_str()))
        })
        .collect();
    if selected.is_empty() {
        eprintln!(
            "error: no trial matches {:?} (see `casebook list`)",
            options.filters
        );
        return ExitCode::from(exit::NO_MATCH);
    }
    let environment = match environment::detect() {
        Ok(env) => env,
        Err(reason) => {
            eprintln!("error: run-all needs a GPU: {reason}");
            return ExitCode::from(exit::NO_GPU);
        }
    };
    eprintln!(
        "{} on driver {} (CUDA {}), kernels from toolkit {}: {} trials",
        environment.gpu,
        environment.driver,
        environment.cuda,
        environment.toolkit,
        selected.len()
    );

    let started = Instant::now();
    let mut results = Vec::new();
    let total = selected.len();
    for (n, (scenario, vi)) in selected.into_iter().enumerate() {
        let variant = &scenario.variants[vi];
        let name = scenario.trial_name(variant);
        eprint!("[{:>2}/{total}] {name:<40} ", n + 1);
        let _ = std::io::stderr().flush();
        let record = match trial::run(scenario, variant) {
            Ok(record) => record,
            Err(e) => {
                eprintln!("error: cannot start a child process: {e}");
                return ExitCode::from(exit::IO);
            }
        };
        let status = snapshot::compare(&root, scenario, &record.view);
        let verdict = match record.judgement.verdict {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
        };
        let snap = match status {
            SnapshotStatus::Matched => "",
            SnapshotStatus::New => "  [new snapshot]",
            SnapshotStatus::Changed => "  [snapshot changed]",
        };
        eprintln!(
            "{verdict} {:>7.2} s  {}{snap}",
            record.outcome.seconds,
            crate::judge::observed_text(&record.judgement)
        );
        if record.judgement.verdict == Verdict::Fail {
            eprintln!(
                "        {}",
                crate::report::failure_details(&record).replace('\n', "\n        ")
            );
        }
        results.push(ResultEntry::new(&record, status));
    }

    let report = Report::new(environment, results, started.elapsed().as_secs_f64());
    println!("{}", report.table(presets::UTF8_FULL_CONDENSED));
    println!(
        "{} passed, {} failed; {} snapshot(s) new or changed; {:.1} s",
        report.summary.passed,
        report.summary.failed,
        report.summary.snapshots_changed,
        report.wall_seconds
    );
    println!("{}", claims_line(&report, options.undecided));
    if let Err(e) = write_outputs(&root, &options.out, &report) {
        eprintln!(
            "error: cannot write the report to {}: {e}",
            options.out.display()
        );
        return ExitCode::from(exit::IO);
    }
    if report.summary.failed > 0 {
        ExitCode::from(exit::TRIAL_FAILED)
    } else if report.summary.snapshots_changed > 0 {
        ExitCode::from(exit::SNAPSHOTS_DIFFER)
    } else {
        ExitCode::SUCCESS
    }
}

fn write_outputs(root: &Path, out: &Path, report: &Report) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    std::fs::write(
        out.join("report.json"),
        serde_json::to_string_pretty(report)? + "\n",
    )?;
    std::fs::write(out.join("report.md"), report.markdown())?;
    std::fs::write(out.join("junit.xml"), report.junit())?;
    let pending = pending_snapshots(root)?;
    let tar_path = out.join("snapshots.tar");
    if pending.is_empty() {
        let _ = std::fs::remove_file(&tar_path);
    } else {
        let mut tar = tar::Builder::new(std::fs::File::create(&tar_path)?);
        for path in &pending {
            tar.append_path_with_name(root.join(path), path)?;
        }
        tar.finish()?;
        eprintln!(
            "{} snapshot(s) to review packed in {}",
            pending.len(),
            tar_path.display()
        );
    }
    eprintln!("report: {}", out.join("report.json").display());
    Ok(())
}

/// Every `.snap.new` under `scenarios/`, relative to the root.
pub fn pending_snapshots(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for scenario in std::fs::read_dir(root.join("scenarios"))? {
        let dir = scenario?.path().join("snapshots");
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.to_string_lossy().ends_with(".snap.new") {
                found.push(path.strip_prefix(root).unwrap_or(&path).to_path_buf());
            }
        }
    }
    found.sort();
    Ok(found)
}

/// `claims: N in the ledger: a confirmed, b refuted, c partly, …`.
pub fn claims_line(report: &Report, (untestable, not_yet): (usize, usize)) -> String {
    use casebook_model::ClaimVerdict::*;
    let verdicts: Vec<_> = report
        .results
        .iter()
        .flat_map(|r| r.claims.iter().map(|c| c.verdict))
        .collect();
    let count = |v| verdicts.iter().filter(|x| **x == v).count();
    format!(
        "claims: {} in the ledger: {} confirmed, {} refuted, {} partly, {} undecided by this run, {} untestable, {} not yet tested",
        verdicts.len() + untestable + not_yet,
        count(Confirmed),
        count(Refuted),
        count(Partly),
        count(Undecided),
        untestable,
        not_yet
    )
}
