//! `casebook run-all`: every trial on the GPU, a table, the reports, and
//! any new snapshots packed for review.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use casebook_model::Scenario;
use casebook_report::{Exit, Partition, TrialId};
use comfy_table::presets;

use crate::gpus::Gpu;
use crate::judge::Verdict;
use crate::report::{self, Report};
use crate::schedule::{self, Trial};
use crate::snapshot::{self, SnapshotStatus};
use crate::{environment, isolation, leftover, lock, workspace};

#[derive(Debug, Clone)]
pub struct Options {
    /// Run only trials whose `<slug>::<variant>` contains one of these.
    pub filters: Vec<String>,
    /// Where `report.json`, `report.md`, `junit.xml` and `snapshots.tar` go.
    pub out: PathBuf,
    /// The claims of the ledger that no scenario decides: (untestable, not yet tested).
    pub undecided: (usize, usize),
    /// Trials side by side at most; `None` for [`schedule::default_jobs`].
    pub jobs: Option<usize>,
    /// Run only this shard of the catalogue.
    pub partition: Option<Partition>,
}

/// Makes Ctrl-C and SIGTERM stop the run: running children are killed with
/// their groups, and the caller writes the partial report. A second signal
/// exits at once.
pub fn stop_on_signals() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let installed = ctrlc::set_handler(|| {
            if isolation::interrupted() {
                std::process::exit(i32::from(Exit::Interrupted.code()));
            }
            eprintln!("\ninterrupted: stopping the running trials, writing the partial report");
            isolation::interrupt();
        });
        if let Err(e) = installed {
            eprintln!("warning: Ctrl-C will not write a partial report: {e}");
        }
    });
}

/// What a GPU command needs before it starts: the trials, the GPU lock,
/// the environment. Errors are the exit code, with the line already printed.
pub struct Prepared<'a> {
    pub trials: Vec<Trial<'a>>,
    /// Selected trials that cannot run here, with the reason.
    pub skipped: Vec<report::Skipped>,
    pub environment: environment::Environment,
    /// The GPUs to spread the trials over (none: unpinned, as inherited).
    pub gpus: Vec<Gpu>,
    pub lock: Vec<lock::GpuLock>,
}

pub fn prepare<'a>(
    catalog: &'a [Scenario],
    filters: &[String],
    what: &str,
) -> Result<Prepared<'a>, ExitCode> {
    let trials = schedule::select(catalog, filters);
    if trials.is_empty() {
        eprintln!("error: no trial matches {filters:?} (see `casebook list`)");
        return Err(Exit::NoMatch.into());
    }
    let (trials, skipped) = split_skipped(trials);
    for s in &skipped {
        eprintln!("skipped: {}: {}", s.trial, s.reason);
    }
    let environment = match environment::detect() {
        Ok(env) => env,
        Err(environment::Unusable::TooOld(reason)) => {
            eprintln!("error: {what} needs a newer driver: {reason}");
            return Err(Exit::DriverTooOld.into());
        }
        Err(environment::Unusable::NoGpu(reason)) => {
            eprintln!("error: {what} needs a GPU: {reason}");
            return Err(Exit::NoGpu.into());
        }
    };
    let gpus = visible_gpus();
    let lock = lock::acquire(what, &gpus).map_err(|e| {
        let paths: Vec<String> = lock::paths(&gpus)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        eprintln!("error: cannot take the GPU lock {}: {e}", paths.join(", "));
        ExitCode::from(Exit::Io)
    })?;
    Ok(Prepared {
        trials,
        skipped,
        environment,
        gpus,
        lock,
    })
}

/// The GPUs this process may use (see [`crate::gpus::visible`]); none when
/// NVML cannot say, and the children then inherit what this process sees.
pub fn visible_gpus() -> Vec<Gpu> {
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
    nvml_wrapper::Nvml::init()
        .map_err(|e| e.to_string())
        .and_then(|nvml| crate::gpus::visible(&nvml, visible.as_deref()))
        .unwrap_or_else(|e| {
            eprintln!("warning: trials are not pinned to GPUs: {e}");
            Vec::new()
        })
}

/// Sets aside the trials that cannot run here (PyTorch variants where the
/// interpreter cannot import torch with CUDA), each with the reason.
pub fn split_skipped(trials: Vec<Trial<'_>>) -> (Vec<Trial<'_>>, Vec<report::Skipped>) {
    let mut skipped = Vec::new();
    let runnable = trials
        .into_iter()
        .filter(|t| match crate::pytorch::skip_reason(t.variant) {
            Some(reason) => {
                skipped.push(report::Skipped {
                    trial: t.name(),
                    reason,
                });
                false
            }
            None => true,
        })
        .collect();
    (runnable, skipped)
}

/// Runs `trials` on `gpus` with the progress display, and builds the
/// report (not yet written). Trials an ended run left on the GPUs are
/// named first; the exclusive trials do not run beside them.
pub fn execute(
    root: &Path,
    trials: &[Trial],
    environment: environment::Environment,
    gpus: &[Gpu],
    jobs: usize,
) -> (Report, Vec<String>) {
    stop_on_signals();
    let monitor = leftover::Monitor::start(gpus);
    let orphans = monitor.as_ref().map(|m| m.orphans()).unwrap_or_default();
    for o in &orphans {
        eprintln!("error: {}", leftover::describe(o));
    }
    let mut held_back = Vec::new();
    let trials: Vec<Trial> = if orphans.is_empty() {
        trials.to_vec()
    } else {
        let (alone, shared): (Vec<Trial>, Vec<Trial>) =
            trials.iter().partition(|t| t.is_exclusive());
        eprintln!(
            "error: {} trial(s) of an ended run hold GPU memory: the {} trial(s) that need a \
             whole GPU do not run beside them",
            orphans.len(),
            alone.len()
        );
        held_back = alone
            .iter()
            .map(|t| report::Skipped {
                trial: t.name(),
                reason: "needs a whole GPU, and trials of an ended run hold memory on it: stop \
                         them (see the orphans) and run again"
                    .to_owned(),
            })
            .collect();
        shared
    };
    let trials = &trials[..];
    if let Ok(m) = &monitor {
        let others = m.foreign_processes().saturating_sub(orphans.len());
        if others > 0 {
            eprintln!(
                "warning: {others} other process(es) use the GPU; measurements may be disturbed"
            );
        }
    }
    let on = match gpus {
        [] | [_] => String::new(),
        several => format!(
            " over {} GPUs ({})",
            several.len(),
            several
                .iter()
                .map(|g| g.index.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    eprintln!(
        "{} on driver {} (CUDA {}), kernels from toolkit {}: {} trials, {jobs} side by side{on}",
        environment.gpu,
        environment.driver,
        environment.cuda,
        environment.toolkit,
        trials.len()
    );
    let placement = schedule::Placement {
        gpus: gpus.to_vec(),
        monitor: monitor.as_ref().ok(),
        expected: schedule::expected_seconds(root),
    };
    let several = gpus.len() > 1;
    let mut statuses = std::collections::HashMap::new();
    let executed = schedule::execute(trials, jobs, Some(&placement), |t, record, p| {
        let status = snapshot::compare(root, t.scenario, &record.view);
        statuses.insert(t.name(), status);
        let verdict = record.judgement.verdict.shown();
        let snap = match status {
            SnapshotStatus::Matched => "",
            SnapshotStatus::New => "  [new snapshot]",
            SnapshotStatus::Changed => "  [snapshot changed]",
        };
        let on = match record.gpu.filter(|_| several) {
            Some(g) => format!("  [GPU {g}]"),
            None => String::new(),
        };
        eprintln!(
            "{} {:<44} {verdict} {:>6.2} s  {}{snap}{on}",
            p.line(),
            t.name(),
            record.outcome.seconds,
            crate::judge::observed_text(&record.judgement)
        );
        if record.judgement.verdict == Verdict::Fail {
            eprintln!(
                "        {}",
                report::failure_details(record).replace('\n', "\n        ")
            );
        }
    });
    let results = trials
        .iter()
        .zip(&executed.records)
        .filter_map(|(t, r)| {
            let r = r.as_ref()?;
            Some(report::entry(r, statuses[&t.name()]))
        })
        .collect();
    let mut report = report::new(environment, results, executed.wall_seconds);
    report.run.jobs = jobs;
    report.run.interrupted = isolation::interrupted().then(|| "SIGINT or SIGTERM".to_owned());
    report.run.not_run = executed.not_run(trials).collect();
    report.run.leftovers = executed.leftovers.clone();
    report.run.gpus = gpus.to_vec();
    report.run.orphans = orphans;
    report.run.skipped = held_back;
    report.run.leftover_check_off = monitor.err();
    for l in &report.run.leftovers {
        eprintln!("error: {l}");
    }
    (report, executed.start_errors)
}

pub fn run_all(catalog: &[Scenario], options: &Options) -> ExitCode {
    let root = workspace::root();
    let mut prepared = match prepare(catalog, &options.filters, "run-all") {
        Ok(p) => p,
        Err(code) => return code,
    };
    if let Some(shard) = options.partition {
        let held = in_shard(catalog, shard);
        prepared.trials.retain(|t| held(&t.name()));
        prepared.skipped.retain(|s| held(&s.trial));
        eprintln!(
            "shard {shard}: {} trial(s) of the catalogue's {}",
            prepared.trials.len() + prepared.skipped.len(),
            schedule::select(catalog, &[]).len()
        );
    }
    let jobs = options.jobs.unwrap_or_else(schedule::default_jobs);
    let (mut report, start_errors) = execute(
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
    println!("{}", report::table(&report, presets::UTF8_FULL_CONDENSED));
    println!(
        "{} passed, {} failed, {} skipped, {} not run; {} snapshot(s) new or changed; {:.1} s",
        report.summary.passed,
        report.summary.failed,
        report.run.skipped.len(),
        report.run.not_run.len(),
        report.summary.snapshots_changed,
        report.wall_seconds
    );
    println!("{}", claims_line(&report, options.undecided));
    if let Some(off) = &report.run.leftover_check_off {
        eprintln!("warning: the leftover-memory check did not run: {off}");
    }
    if let Err(e) = write_outputs(&root, &options.out, &report) {
        eprintln!(
            "error: cannot write the report to {}: {e}",
            options.out.display()
        );
        return Exit::Io.into();
    }
    exit_code(&report, &start_errors)
}

/// Whether a trial, by name, is in `shard`: the catalogue's trials, in
/// order and unfiltered, dealt out one per shard in turn, so a trial's shard
/// does not depend on the filters.
pub fn in_shard(catalog: &[Scenario], shard: Partition) -> impl Fn(&TrialId) -> bool {
    let names: Vec<TrialId> = schedule::select(catalog, &[])
        .iter()
        .map(|t| t.name())
        .collect();
    move |name| {
        names
            .iter()
            .position(|n| n == name)
            .is_some_and(|i| shard.holds(i))
    }
}

/// The exit code a finished (or interrupted) run amounts to.
pub fn exit_code(report: &Report, start_errors: &[String]) -> ExitCode {
    for e in start_errors {
        eprintln!("error: {e}");
    }
    ExitCode::from(if report.run.interrupted.is_some() {
        Exit::Interrupted
    } else if !start_errors.is_empty() {
        Exit::Io
    } else if !report.run.orphans.is_empty() {
        Exit::LeftByAnEndedRun
    } else if report.summary.failed > 0 {
        Exit::TrialFailed
    } else if !report.run.leftovers.is_empty() {
        Exit::MemoryLeftHeld
    } else if report.summary.snapshots_changed > 0 {
        Exit::SnapshotsDiffer
    } else {
        Exit::Success
    })
}

pub fn write_outputs(root: &Path, out: &Path, report: &Report) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    std::fs::write(
        out.join("report.json"),
        serde_json::to_string_pretty(report)? + "\n",
    )?;
    std::fs::write(out.join("report.md"), report::markdown(report))?;
    std::fs::write(out.join("junit.xml"), report::junit(report))?;
    pack_snapshots(root, out)?;
    eprintln!("report: {}", out.join("report.json").display());
    Ok(())
}

/// Packs every pending snapshot into `out/snapshots.tar` for review (and
/// removes a stale one when none is pending); returns how many it packed.
pub fn pack_snapshots(root: &Path, out: &Path) -> std::io::Result<usize> {
    let pending = pending_snapshots(root)?;
    let tar_path = out.join("snapshots.tar");
    if pending.is_empty() {
        let _ = std::fs::remove_file(&tar_path);
        return Ok(0);
    }
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
    Ok(pending.len())
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
