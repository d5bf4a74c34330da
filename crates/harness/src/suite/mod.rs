//! The snapshot regression suite under libtest-mimic: one trial per
//! scenario and variant, named `<slug>::<variant>`, each in a child process.
//! Works under `cargo test` and `cargo nextest run`. The [`checks`] of the
//! catalogue itself run beside them.

pub mod checks;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

use casebook_model::Scenario;
use casebook_report::{Exit, ResultEntry, Verdict};
use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::environment::{self, Environment, Unusable};
use crate::lock::{hold_gpu, share_lock_path};
use crate::reporter::progress::failure_details;
use crate::reporter::{report, snapshot};
use crate::runner::{self, executor};
use crate::{REQUIRE_GPU_ENV, child, workspace};

/// The whole `main` of a suite binary.
pub fn main(catalog: Vec<Scenario>, extra: Vec<Trial>) -> ExitCode {
    child::serve_if_child(&catalog);
    let root = workspace::root();
    workspace::pin_insta_root(&root);
    let args = Arguments::from_args();
    let catalog = Arc::new(catalog);
    let mut trials = checks::catalog_checks(&catalog, &root);
    trials.extend(extra);
    trials.extend(variant_trials(&catalog, &root));
    if let Some(filter) = &args.filter
        && trials.iter().all(|t| args.is_filtered_out(t))
    {
        eprintln!("error: the filter {filter:?} matches no trial (try --list)");
        return Exit::NoMatch.into();
    }
    libtest_mimic::run(&args, trials).exit_code()
}

fn gpu() -> &'static Result<Environment, Unusable> {
    static GPU: OnceLock<Result<Environment, Unusable>> = OnceLock::new();
    GPU.get_or_init(environment::detect)
}

/// Why a trial of `scenario` cannot run in this process, for want of a
/// second GPU: it needs a pair, and the probe, which inherits this
/// process's `CUDA_VISIBLE_DEVICES` as the trial's child does, sees fewer.
fn pair_missing(scenario: &Scenario) -> Option<String> {
    if !scenario.needs_pair() {
        return None;
    }
    let seen = gpu().as_ref().map_or(0, |env| env.device_count as usize);
    runner::dispatch::pair_skip_reason(seen)
}

/// Where each GPU trial writes its result (`<slug>@<variant>.json`, the
/// entry a run-all report holds) when set: under nextest, where every trial
/// is a process of its own, `casebook collect` makes the shard's report from
/// them.
pub const RESULTS_ENV: &str = "CASEBOOK_RESULTS";

/// Writes `entry` into `dir` as `<slug>@<variant>.json`.
pub fn write_result(dir: &Path, entry: &ResultEntry) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let text = serde_json::to_string(entry).map_err(std::io::Error::other)?;
    std::fs::write(
        dir.join(format!("{}@{}.json", entry.scenario, entry.variant)),
        text,
    )
}

/// One trial per variant.
///
/// Without a GPU, a GPU trial decides at run time that it is ignored and
/// says why; cargo test prints the reason. nextest, though, counts a
/// run-time ignore as a pass, so under nextest such a trial is marked
/// ignored when the trials are listed, and shows as skipped. So is a pair
/// trial where this process sees fewer than two GPUs, even where a GPU is
/// required: a shard pinned to one GPU never passes it.
pub fn variant_trials(catalog: &Arc<Vec<Scenario>>, root: &Path) -> Vec<Trial> {
    let under_nextest =
        std::env::var_os("NEXTEST_RUN_ID").is_some() || std::env::var_os("NEXTEST").is_some();
    let skip_now = under_nextest && std::env::var_os(REQUIRE_GPU_ENV).is_none();
    let mut trials = Vec::new();
    for (si, scenario) in catalog.iter().enumerate() {
        for (vi, variant) in scenario.variants.iter().enumerate() {
            let catalog = Arc::clone(catalog);
            let root = root.to_path_buf();
            let ignored = (skip_now
                && ((scenario.needs_gpu() && gpu().is_err())
                    || crate::pytorch::skip_reason(variant).is_some()
                    || crate::cgroup::skip_reason(variant).is_some()))
                || (under_nextest && pair_missing(scenario).is_some());
            trials.push(
                Trial::ignorable_test(scenario.trial_name(variant), move || {
                    run_variant(&catalog[si], vi, &root)
                })
                .with_ignored_flag(ignored),
            );
        }
    }
    trials
}

fn run_variant(scenario: &Scenario, vi: usize, root: &Path) -> Result<Completion, Failed> {
    let variant = &scenario.variants[vi];
    let trial = runner::Trial { scenario, variant };
    if scenario.needs_gpu()
        && let Err(reason) = gpu()
    {
        if std::env::var_os(REQUIRE_GPU_ENV).is_some() {
            return Err(format!("no GPU, and {REQUIRE_GPU_ENV} is set: {reason}").into());
        }
        let also = crate::pytorch::skip_reason(variant)
            .map(|torch| format!("; it also {torch}"))
            .unwrap_or_default();
        return Ok(Completion::ignored_with(format!(
            "needs a GPU: {reason}{also}"
        )));
    }
    // Without a second GPU a pair trial is skipped, without torch a
    // PyTorch trial, and without a memory cgroup a trial that needs one,
    // even where a GPU is required: the rest of the run stands on its own.
    if let Some(reason) = pair_missing(scenario)
        .or_else(|| crate::pytorch::skip_reason(variant))
        .or_else(|| crate::cgroup::skip_reason(variant))
    {
        return Ok(Completion::ignored_with(reason));
    }
    let record = {
        let _held = hold_gpu(scenario.runs_alone(variant)).map_err(|e| {
            format!(
                "cannot take the GPU's share lock {}: {e}",
                share_lock_path().display()
            )
        })?;
        executor::run(trial, &[]).map_err(|e| format!("cannot start the child: {e}"))?
    };
    let existed = snapshot::path(root, scenario.slug, variant.name).is_file();
    let snapshot = catch_unwind(AssertUnwindSafe(|| {
        snapshot::assert(root, scenario, &snapshot::SnapshotView::of(trial, &record))
    }));
    if let Some(dir) = std::env::var_os(RESULTS_ENV) {
        let status = snapshot::status(snapshot.is_ok(), existed);
        write_result(Path::new(&dir), &report::entry(trial, &record, status))
            .map_err(|e| format!("cannot write the trial's result to {}: {e}", dir.display()))?;
    }
    if record.judgement.verdict == Verdict::Fail {
        return Err(failure_details(&record).into());
    }
    if snapshot.is_err() {
        return Err(format!(
            "the outcome differs from {}: review the .snap.new beside it, then `cargo xtask bless`",
            snapshot::path(root, scenario.slug, variant.name).display()
        )
        .into());
    }
    Ok(Completion::Completed)
}
