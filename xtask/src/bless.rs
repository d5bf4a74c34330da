//! `cargo xtask bless`: accept reviewed snapshots from a GPU run.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

/// `casebook_report::run::SINCE_DIR`, spelled here as xtask links no crate
/// of the workspace (a test holds the two the same).
const SINCE_DIR: &str = "docs/evidence/since-latest";

#[derive(clap::Args)]
pub struct Args {
    /// A run's snapshots.tar (from `casebook run-all --out DIR`) to unpack first.
    #[arg(long, value_name = "TAR")]
    from: Option<PathBuf>,
    /// That run's report.json: copied to docs/evidence/latest.json (and its
    /// report.md beside it to latest.md), to commit with the snapshots. A
    /// full run: the reports of trials run since the last one are removed.
    #[arg(long, value_name = "JSON", conflicts_with = "later")]
    report: Option<PathBuf>,
    /// The report.json of a run of some trials made after the full run in
    /// latest.json (the fix of one case): copied into
    /// docs/evidence/since-latest/, where its results stand in for those
    /// trials' until the next full run.
    #[arg(long, value_name = "JSON")]
    later: Option<PathBuf>,
    /// With --later: keep only these cases' results (repeatable), for a
    /// run older than latest.json whose other trials the full run has run
    /// again (the pair cases, run on two GPUs, beside a full run on one).
    #[arg(long, value_name = "SCENARIO", requires = "later")]
    only: Vec<String>,
}

/// A report's results cut to `only`'s cases, its summary counted again
/// from what is kept.
fn keep_only(run: &mut serde_json::Value, only: &[String]) -> anyhow::Result<()> {
    let Some(results) = run["results"].as_array_mut() else {
        bail!("the report has no results");
    };
    results.retain(|r| {
        only.iter()
            .any(|s| r["scenario"].as_str() == Some(s.as_str()))
    });
    if results.is_empty() {
        bail!("the report has no result of {}", only.join(", "));
    }
    let passed = results.iter().filter(|r| r["verdict"] == "pass").count();
    let changed = results
        .iter()
        .filter(|r| r["snapshot"].as_str().is_some_and(|s| s != "matched"))
        .count();
    let trials = results.len();
    run["summary"] = serde_json::json!({
        "trials": trials,
        "passed": passed,
        "failed": trials - passed,
        "snapshots_changed": changed,
    });
    Ok(())
}

/// The trials (`<slug>@<variant>`, as snapshot files name them) that did
/// not pass in a run's report: their pending snapshots record a failure and
/// are not taken from that run's tar.
fn not_passed(run: &serde_json::Value) -> std::collections::BTreeSet<String> {
    run["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["verdict"] != "pass")
        .filter_map(|r| {
            Some(format!(
                "{}@{}",
                r["scenario"].as_str()?,
                r["variant"].as_str()?
            ))
        })
        .collect()
}

/// The trial a pending snapshot's path names:
/// `scenarios/<slug>/snapshots/<slug>@<variant>.snap.new` gives
/// `<slug>@<variant>`.
fn trial_of(path: &std::path::Path) -> Option<&str> {
    path.file_name()?.to_str()?.strip_suffix(".snap.new")
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = crate::project::root();
    // The report the tar comes with: a trial that did not pass there (it
    // failed, or ran past its limit, and was run again later) leaves its
    // pending snapshot out.
    let failed = match args.report.as_ref().or(args.later.as_ref()) {
        Some(report) if args.from.is_some() => not_passed(
            &serde_json::from_str(
                &std::fs::read_to_string(report)
                    .with_context(|| format!("reading {}", report.display()))?,
            )
            .with_context(|| format!("{} is not a run's report", report.display()))?,
        ),
        _ => Default::default(),
    };
    if let Some(tar) = &args.from {
        let file =
            std::fs::File::open(tar).with_context(|| format!("opening {}", tar.display()))?;
        let mut archive = tar::Archive::new(file);
        for entry in archive.entries()? {
            let mut entry = entry?;
            let path = entry.path()?.into_owned();
            let ok = path.starts_with("scenarios") && path.to_string_lossy().ends_with(".snap.new");
            if !ok || path.components().any(|c| c.as_os_str() == "..") {
                bail!(
                    "{} holds {}, which is not a pending snapshot",
                    tar.display(),
                    path.display()
                );
            }
            if trial_of(&path).is_some_and(|t| failed.contains(t)) {
                println!(
                    "left out {}: the trial did not pass in the report given",
                    path.display()
                );
                continue;
            }
            let dest = root.join(&path);
            if let Some(dir) = dest.parent() {
                std::fs::create_dir_all(dir)?;
            }
            entry.unpack(dest)?;
        }
    }
    let mut accepted = 0;
    for scenario in std::fs::read_dir(root.join("scenarios"))? {
        let dir = scenario?.path().join("snapshots");
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if let Some(name) = path.to_str().and_then(|p| p.strip_suffix(".new"))
                && name.ends_with(".snap")
            {
                std::fs::rename(&path, name)?;
                println!(
                    "accepted {}",
                    name.strip_prefix(root.to_str().unwrap_or(""))
                        .unwrap_or(name)
                );
                accepted += 1;
            }
        }
    }
    if let Some(report) = &args.later {
        let mut run: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(report)
                .with_context(|| format!("reading {}", report.display()))?,
        )
        .with_context(|| format!("{} is not a run's report", report.display()))?;
        let commit: String = run["source"]["commit"]
            .as_str()
            .unwrap_or("unknown")
            .chars()
            .take(7)
            .collect();
        let dir = root.join(SINCE_DIR);
        std::fs::create_dir_all(&dir)?;
        let n = std::fs::read_dir(&dir)?.count() + 1;
        let to = dir.join(format!("{n:02}-{commit}.json"));
        if args.only.is_empty() {
            std::fs::copy(report, &to).with_context(|| format!("copying {}", report.display()))?;
        } else {
            keep_only(&mut run, &args.only)?;
            std::fs::write(&to, serde_json::to_string_pretty(&run)? + "\n")?;
        }
        println!(
            "evidence: {} from {}",
            to.strip_prefix(&root).unwrap_or(&to).display(),
            report.display()
        );
    }
    if let Some(report) = &args.report {
        let evidence = root.join("docs/evidence");
        std::fs::create_dir_all(&evidence)?;
        if let Ok(dir) = std::fs::read_dir(root.join(SINCE_DIR)) {
            for entry in dir.flatten() {
                std::fs::remove_file(entry.path())?;
            }
        }
        std::fs::copy(report, evidence.join("latest.json"))
            .with_context(|| format!("copying {}", report.display()))?;
        let md = report.with_extension("md");
        if md.is_file() {
            std::fs::copy(&md, evidence.join("latest.md"))?;
        } else if evidence.join("latest.md").is_file() {
            // An earlier run's page would stand beside this run's data.
            std::fs::remove_file(evidence.join("latest.md"))?;
            println!(
                "evidence: no report.md beside {}: docs/evidence/latest.md removed",
                report.display()
            );
        }
        let sanitize = report.with_file_name("sanitize.json");
        if sanitize.is_file() {
            std::fs::copy(&sanitize, evidence.join("sanitize.json"))?;
            println!("evidence: docs/evidence/sanitize.json");
        }
        println!(
            "evidence: docs/evidence/latest.json from {}",
            report.display()
        );
    }
    println!("{accepted} snapshot(s) accepted");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_folder_of_later_runs_is_the_report_crate_s() {
        assert_eq!(super::SINCE_DIR, casebook_report::run::SINCE_DIR);
    }

    #[test]
    fn a_trial_that_did_not_pass_leaves_its_pending_snapshot_out() {
        let run = serde_json::json!({
            "results": [
                {"scenario": "a", "variant": "broken", "verdict": "pass"},
                {"scenario": "a", "variant": "slow-py", "verdict": "fail"},
            ],
        });
        let failed = super::not_passed(&run);
        let path = |p: &str| std::path::PathBuf::from(p);
        let trial = |p: &str| super::trial_of(&path(p)).map(str::to_owned);
        assert_eq!(
            trial("scenarios/a/snapshots/a@slow-py.snap.new").as_deref(),
            Some("a@slow-py")
        );
        assert!(failed.contains("a@slow-py"));
        assert!(!failed.contains("a@broken"));
        assert_eq!(trial("scenarios/a/snapshots/a@broken.snap"), None);
    }

    #[test]
    fn only_keeps_the_named_cases_and_counts_them_again() {
        let mut run = serde_json::json!({
            "summary": {"trials": 3, "passed": 2, "failed": 1, "snapshots_changed": 2},
            "results": [
                {"scenario": "a", "verdict": "pass", "snapshot": "changed"},
                {"scenario": "b", "verdict": "fail", "snapshot": "changed"},
                {"scenario": "a", "verdict": "pass", "snapshot": "matched"},
            ],
        });
        super::keep_only(&mut run, &["a".to_string()]).unwrap();
        assert_eq!(run["results"].as_array().unwrap().len(), 2);
        assert_eq!(
            run["summary"],
            serde_json::json!({"trials": 2, "passed": 2, "failed": 0, "snapshots_changed": 1})
        );
        let err = super::keep_only(&mut run, &["c".to_string()]).unwrap_err();
        assert!(err.to_string().contains("no result of c"), "{err}");
    }
}
