//! The hardware-independent form of an outcome, snapshotted with insta.
//!
//! It holds names, yes/no checks and facts the variant chose to be the same
//! on every GPU. Raw figures (bytes, seconds, counts that scale with the
//! device's memory) go only to the JSON report.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use casebook_model::{Binding, ClaimVerdict, Outcome, Role, Scenario, Variant};
pub use casebook_report::SnapshotStatus;
use casebook_report::Verdict;
use casebook_report::sanitizer::{Cell, ENDED_BADLY};
use serde::Serialize;

use crate::judge::{Judgement, observed_text};
use crate::runner::dispatch::Trial;
use crate::runner::executor::TrialRecord;
use crate::workspace;

/// The longest run of calls folded into one `repeated` block.
const MAX_PERIOD: usize = 32;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SnapshotView {
    pub scenario: String,
    pub variant: String,
    pub role: Role,
    pub binding: Binding,
    pub expected: String,
    pub observed: String,
    pub verdict: Verdict,
    pub termination: String,
    /// The calls made. Identical iterations of a loop fold into one entry
    /// labelled `(repeated)`, so that a loop that runs 40 times here and 70
    /// times on a larger GPU snapshots the same.
    pub steps: Vec<StepLine>,
    pub checks: BTreeMap<String, bool>,
    pub facts: BTreeMap<String, serde_json::Value>,
    pub claims: BTreeMap<String, ClaimVerdict>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum StepLine {
    Once(String),
    Repeated {
        repeated: Vec<String>,
    },
    /// One iteration, or a run of identical ones: `{"model call (repeated)": [..]}`.
    Iteration(BTreeMap<String, Vec<String>>),
}

impl SnapshotView {
    /// The view of `trial`'s finished run.
    pub fn of(trial: Trial, record: &TrialRecord) -> Self {
        SnapshotView::new(
            trial.scenario,
            trial.variant,
            &record.outcome,
            &record.judgement,
            &record.claims,
        )
    }

    pub fn new(
        scenario: &Scenario,
        variant: &Variant,
        outcome: &Outcome,
        judgement: &Judgement,
        claims: &[crate::judge::ClaimResult],
    ) -> Self {
        let lines: Vec<String> = outcome
            .steps
            .iter()
            .map(|s| {
                let note = if s.tolerated && s.is_error() {
                    " (provoked)"
                } else {
                    ""
                };
                format!("{} -> {}{note}", s.call, s.result)
            })
            .collect();
        SnapshotView {
            scenario: scenario.slug.to_owned(),
            variant: variant.name.to_owned(),
            role: variant.role,
            binding: variant.binding,
            expected: variant.expected_text(),
            observed: observed_text(judgement),
            verdict: judgement.verdict,
            termination: outcome.termination.to_string(),
            steps: fold_iterations(&lines, &outcome.iterations),
            checks: outcome
                .checks
                .iter()
                .map(|c| (c.name.clone(), outcome.check_named(&c.name) == Some(true)))
                .collect(),
            facts: outcome.facts.clone(),
            claims: claims.iter().map(|c| (c.id.clone(), c.verdict)).collect(),
        }
    }
}

/// Groups the steps by the loop iterations the variant marked, folding each
/// run of identical iterations into one entry; the steps between loops fold
/// as [`fold_loops`] does.
pub fn fold_iterations(
    lines: &[String],
    iterations: &[casebook_model::Iteration],
) -> Vec<StepLine> {
    let mut out = Vec::new();
    let (mut i, mut it) = (0, 0);
    while i < lines.len() || it < iterations.len() {
        match iterations.get(it) {
            Some(first) if first.start <= i => {
                let body = &lines[first.start.min(lines.len())..first.end.min(lines.len())];
                let mut next = it + 1;
                while let Some(other) = iterations.get(next) {
                    let same = other.label == first.label
                        && other.start == iterations[next - 1].end
                        && lines.get(other.start..other.end) == Some(body);
                    if !same {
                        break;
                    }
                    next += 1;
                }
                let label = if next - it > 1 {
                    format!("{} (repeated)", first.label)
                } else {
                    first.label.clone()
                };
                out.push(StepLine::Iteration(BTreeMap::from([(
                    label,
                    body.to_vec(),
                )])));
                i = i.max(iterations[next - 1].end);
                it = next;
            }
            next => {
                let stop = next.map_or(lines.len(), |n| n.start.min(lines.len()));
                out.extend(fold_loops(&lines[i..stop]));
                i = stop;
            }
        }
    }
    out
}

/// Folds every run of two or more back-to-back repeats of a block of calls
/// into one `repeated` entry. The repeat count is left out: it depends on
/// the GPU (how many leaks fit in its memory); the raw count is in the report.
pub fn fold_loops(lines: &[String]) -> Vec<StepLine> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let mut best: Option<(usize, usize)> = None;
        for period in 1..=MAX_PERIOD.min((lines.len() - i) / 2) {
            let block = &lines[i..i + period];
            let mut reps = 1;
            while i + (reps + 1) * period <= lines.len()
                && &lines[i + reps * period..i + (reps + 1) * period] == block
            {
                reps += 1;
            }
            if reps >= 2 && best.is_none_or(|(p, r)| reps * period > p * r) {
                best = Some((period, reps));
            }
        }
        match best {
            Some((period, reps)) => {
                out.push(StepLine::Repeated {
                    repeated: lines[i..i + period].to_vec(),
                });
                i += period * reps;
            }
            None => {
                out.push(StepLine::Once(lines[i].clone()));
                i += 1;
            }
        }
    }
    out
}

/// Where the snapshot of one variant lives.
pub fn path(root: &Path, slug: &str, variant: &str) -> PathBuf {
    workspace::snapshot_dir(root, slug).join(format!("{slug}@{variant}.snap"))
}

/// Asserts the snapshot with insta; panics on a mismatch, as insta does,
/// after writing a `.snap.new` when INSTA_UPDATE allows it.
pub fn assert(root: &Path, scenario: &Scenario, view: &SnapshotView) {
    assert_named(root, scenario, &view.variant, view);
}

/// The same for any value, as `<slug>@<suffix>.snap` beside the scenario's
/// other snapshots.
fn assert_named(root: &Path, scenario: &Scenario, suffix: &str, value: &impl Serialize) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(workspace::snapshot_dir(root, scenario.slug));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.set_snapshot_suffix(suffix);
    settings.set_description(scenario.title);
    settings.bind(|| insta::assert_yaml_snapshot!(scenario.slug, value));
}

/// The suffix of a scenario's detection-matrix snapshot.
pub const MATRIX: &str = "sanitize";

/// Compares a scenario's detection matrix with its snapshot, as [`compare`] does.
pub fn compare_matrix(root: &Path, scenario: &Scenario, matrix: &impl Serialize) -> SnapshotStatus {
    compare_with(path(root, scenario.slug, MATRIX).is_file(), || {
        assert_named(root, scenario, MATRIX, matrix)
    })
}

/// [`assert`], with the mismatch as a value instead of a panic.
pub fn compare(root: &Path, scenario: &Scenario, view: &SnapshotView) -> SnapshotStatus {
    compare_with(path(root, scenario.slug, &view.variant).is_file(), || {
        assert(root, scenario, view)
    })
}

/// Whether `view` matches its committed snapshot, leaving nothing to
/// review: a `.snap.new` the comparison writes is removed again (one that
/// was there before, from a GPU run, stays). For checks that rebuild a
/// snapshot from recorded evidence, whose differences are not new results
/// and must never be blessed as such.
pub fn matches_committed(root: &Path, scenario: &Scenario, view: &SnapshotView) -> bool {
    let pending = path(root, scenario.slug, &view.variant).with_extension("snap.new");
    let was_pending = pending.exists();
    let matched = compare(root, scenario, view) == SnapshotStatus::Matched;
    if !was_pending {
        let _ = std::fs::remove_file(&pending);
    }
    matched
}

fn compare_with(existed: bool, assertion: impl FnOnce()) -> SnapshotStatus {
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let matched = catch_unwind(AssertUnwindSafe(assertion)).is_ok();
    std::panic::set_hook(previous_hook);
    status(matched, existed)
}

/// What a comparison amounts to: whether the value matched, and whether a
/// committed snapshot existed before it.
pub fn status(matched: bool, existed: bool) -> SnapshotStatus {
    match (matched, existed) {
        (true, _) => SnapshotStatus::Matched,
        (false, true) => SnapshotStatus::Changed,
        (false, false) => SnapshotStatus::New,
    }
}

/// The API errors that only echo a kernel fault the tool already reported.
const LAUNCH_FAILURE_ECHOES: &[&str] = &[
    "API error CUDA_ERROR_LAUNCH_FAILED",
    "API error cudaErrorLaunchFailure",
];

/// The hardware-independent matrix of one scenario under compute-sanitizer:
/// variant → tool → what the tool showed and the cell's verdict.
pub fn matrix_view(s: &Scenario, cells: &[Cell]) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut view: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for c in cells.iter().filter(|c| c.scenario == s.slug) {
        let what = if c.timed_out {
            "timed out".to_owned()
        } else if c.flagged {
            // A kernel fault is also reported as the launch failure of
            // whichever API call comes next, and whether the tool reports that
            // echo varies from run to run: the snapshot keeps the fault, the
            // JSON report keeps both.
            let fault = c.kinds.iter().any(|k| !k.starts_with("API error"));
            let kinds: Vec<&str> = c
                .kinds
                .iter()
                .map(String::as_str)
                .filter(|k| !(fault && LAUNCH_FAILURE_ECHOES.contains(k)))
                .collect();
            format!(
                "flagged: {}",
                if kinds.is_empty() {
                    "(no kind parsed)".to_owned()
                } else {
                    kinds.join("; ")
                }
            )
        } else if c.kinds.iter().any(|k| k == ENDED_BADLY) {
            "ended on a signal".to_owned()
        } else {
            "clean".to_owned()
        };
        let reduced = if c.reduced { " (reduced form)" } else { "" };
        view.entry(c.variant.clone()).or_default().insert(
            c.tool.clone(),
            format!("{what}{reduced} => {}", c.judgement),
        );
    }
    view
}

/// Packs the pending snapshots of `slugs@variants` (each as
/// `(slug, variant)`, a matrix snapshot's variant being `sanitize`) into
/// `out/snapshots.tar` for review, and removes a stale tar when none is
/// pending; returns how many it packed. Only those named: a `.snap.new` that
/// an earlier run left for a trial this one did not run is not this run's
/// result, and packing it would hand it to review as one.
pub fn pack_snapshots(root: &Path, out: &Path, of: &[(String, String)]) -> std::io::Result<usize> {
    let mut pending: Vec<PathBuf> = of
        .iter()
        .map(|(slug, variant)| path(root, slug, variant).with_extension("snap.new"))
        .filter(|p| p.is_file())
        .map(|p| p.strip_prefix(root).map(Path::to_path_buf).unwrap_or(p))
        .collect();
    pending.sort();
    pending.dedup();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_trials_pending_snapshots_are_packed() {
        let root = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let dir = root.path().join("scenarios/s/snapshots");
        std::fs::create_dir_all(&dir).unwrap();
        // One left by this run, one an earlier run left for a trial this one
        // did not run.
        std::fs::write(dir.join("s@ran.snap.new"), "new").unwrap();
        std::fs::write(dir.join("s@earlier.snap.new"), "stale").unwrap();
        let ran = [("s".to_owned(), "ran".to_owned())];
        assert_eq!(pack_snapshots(root.path(), out.path(), &ran).unwrap(), 1);
        let mut tar =
            tar::Archive::new(std::fs::File::open(out.path().join("snapshots.tar")).unwrap());
        let names: Vec<String> = tar
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["scenarios/s/snapshots/s@ran.snap.new"]);
        // Nothing pending among the named: no tar is left from before.
        assert_eq!(pack_snapshots(root.path(), out.path(), &[]).unwrap(), 0);
        assert!(!out.path().join("snapshots.tar").exists());
    }

    fn lines(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_loop_folds_whatever_its_count() {
        let mut calls = lines(&["init -> ok"]);
        for _ in 0..40 {
            calls.extend(lines(&["alloc -> ok", "launch -> ok"]));
        }
        calls.push("alloc -> OOM".into());
        let short = {
            let mut c = lines(&["init -> ok"]);
            for _ in 0..3 {
                c.extend(lines(&["alloc -> ok", "launch -> ok"]));
            }
            c.push("alloc -> OOM".into());
            c
        };
        let folded = fold_loops(&calls);
        assert_eq!(folded, fold_loops(&short));
        assert_eq!(
            folded,
            vec![
                StepLine::Once("init -> ok".into()),
                StepLine::Repeated {
                    repeated: lines(&["alloc -> ok", "launch -> ok"])
                },
                StepLine::Once("alloc -> OOM".into()),
            ]
        );
    }

    fn iteration(label: &str, start: usize, end: usize) -> casebook_model::Iteration {
        casebook_model::Iteration {
            label: label.into(),
            start,
            end,
        }
    }

    /// `init`, `n` calls that allocate and launch, a last one whose
    /// allocation fails, and `end`: the steps, and an iteration `call`
    /// around each call.
    fn calls_then_oom(n: usize) -> (Vec<String>, Vec<casebook_model::Iteration>) {
        let mut steps = vec!["init"];
        let mut its = Vec::new();
        for i in 0..n {
            steps.extend(["alloc ok", "launch"]);
            its.push(iteration("call", 1 + 2 * i, 3 + 2 * i));
        }
        steps.extend(["alloc OOM", "end"]);
        its.push(iteration("call", 1 + 2 * n, 2 + 2 * n));
        (lines(&steps), its)
    }

    #[test]
    fn identical_iterations_fold_and_different_ones_stay() {
        let (calls, its) = calls_then_oom(3);
        let block = |label: &str, body: &[&str]| {
            StepLine::Iteration(BTreeMap::from([(label.to_owned(), lines(body))]))
        };
        assert_eq!(
            fold_iterations(&calls, &its),
            vec![
                StepLine::Once("init".into()),
                block("call (repeated)", &["alloc ok", "launch"]),
                block("call", &["alloc OOM"]),
                StepLine::Once("end".into()),
            ]
        );
        // Fewer iterations of the same loop: the same snapshot.
        let (short, its_short) = calls_then_oom(2);
        assert_eq!(
            fold_iterations(&short, &its_short),
            fold_iterations(&calls, &its)
        );
    }

    #[test]
    fn distinct_calls_stay_as_they_are() {
        let calls = lines(&["a", "b", "c", "a"]);
        assert_eq!(
            fold_loops(&calls),
            calls.into_iter().map(StepLine::Once).collect::<Vec<_>>()
        );
    }

    #[test]
    fn repeats_of_one_call_fold() {
        let calls = lines(&["x", "x", "x", "y"]);
        assert_eq!(
            fold_loops(&calls),
            vec![
                StepLine::Repeated {
                    repeated: lines(&["x"])
                },
                StepLine::Once("y".into())
            ]
        );
    }
}
