//! `casebook collect`: a shard's report from the results its trials wrote
//! under nextest, as run-all would have written it.

use std::path::Path;
use std::process::ExitCode;

use casebook_model::Scenario;
use casebook_report::{Environment, Exit, Partition, Report, ResultEntry, TrialId};

use crate::reporter;
use crate::runner;
use crate::{commands, environment, workspace};

pub fn run(
    catalog: &[Scenario],
    results: &Path,
    partition: Option<Partition>,
    out: &Path,
) -> ExitCode {
    let environment = match environment::detect() {
        Ok(env) => env,
        Err(reason) => {
            eprintln!("error: collect needs the GPU the trials ran on: {reason}");
            return Exit::NoGpu.into();
        }
    };
    let order: Vec<TrialId> = runner::select(catalog, &[])
        .iter()
        .map(|t| t.name())
        .collect();
    let mut report = match report_of(results, &order, environment) {
        Ok(r) => r,
        Err(e) => {
            eprintln!(
                "error: cannot read the results in {}: {e}",
                results.display()
            );
            return Exit::Io.into();
        }
    };
    report.run.partition = partition;
    report.run.gpus = commands::visible_gpus();
    if report
        .results
        .iter()
        .any(|r| r.binding == casebook_model::Binding::Pytorch)
    {
        report.run.pytorch = crate::pytorch::available().as_ref().ok().cloned();
    }
    println!(
        "{} trial(s) collected from {}: {} passed, {} failed",
        report.summary.trials,
        results.display(),
        report.summary.passed,
        report.summary.failed
    );
    commands::finish(&workspace::root(), out, &report, &[])
}

/// A report made from the results the snapshot suite's trials wrote (see
/// [`crate::suite::RESULTS_ENV`]), in `order` (trial names, the
/// catalogue's): what a nextest shard ran, as run-all would have reported
/// it. The wall time is the span from the first trial's start to the last
/// one's end, by the files' times.
pub fn report_of(
    dir: &std::path::Path,
    order: &[TrialId],
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
    Ok(reporter::report::new(environment, entries, wall))
}

#[cfg(test)]
mod tests {
    use casebook_report::run::fixture::environment;

    use super::*;

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
        let r = report_of(dir.path(), &order, env.clone()).unwrap();
        let names: Vec<casebook_report::TrialId> = r.results.iter().map(|e| e.trial()).collect();
        assert_eq!(names, order);
        assert_eq!((r.summary.trials, r.summary.passed), (2, 2));
        assert!(r.wall_seconds >= 1.5, "{}", r.wall_seconds);
        // A file that is no result is named.
        std::fs::write(dir.path().join("junk.json"), "{}").unwrap();
        let e = report_of(dir.path(), &order, env).unwrap_err().to_string();
        assert!(e.contains("junk.json: not a trial's result"), "{e}");
    }
}
