//! The report of one run (`report.json`): every trial's result with its
//! raw figures, the machine, and how the run went.

use std::path::Path;

use casebook_model::{Binding, Outcome, Role, Symptom, TrialId};
use serde::{Deserialize, Serialize};

use crate::bench::Bench;
use crate::machine::{Environment, Gpu};
use crate::partition::Partition;
use crate::schedule::{CriticalPath, Place};
use crate::verdict::{ClaimResult, Verdict};

/// Where the report of the newest full GPU run is committed.
pub const EVIDENCE_JSON: &str = "docs/evidence/latest.json";

/// Where the reports of trials run since that full run are committed (the
/// fix of one case, run alone): each a run-all report of a later commit.
/// The committed evidence of a trial is its newest run's ([`evidence`]); a
/// full run blessed as the newest empties the folder.
pub const SINCE_DIR: &str = "docs/evidence/since-latest";

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
    pub bench: Option<Bench>,
}

/// A trial not started, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub trial: TrialId,
    pub reason: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunFacts {
    /// Trials run side by side at most (memory-exclusive ones always alone).
    pub jobs: usize,
    /// The signal that interrupted the run, if one did.
    pub interrupted: Option<String>,
    /// The trials that did not run to their end.
    pub not_run: Vec<TrialId>,
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
    pub gpus: Vec<Gpu>,
    /// Trials of an ended run still on a GPU when this one started: the
    /// exclusive trials were not run beside them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orphans: Vec<Orphan>,
    /// Device memory still in use after a trial, with its holders.
    pub leftovers: Vec<Leftover>,
    /// Why the leftover-memory check did not run, if it did not.
    pub leftover_check_off: Option<String>,
    /// The shard this run was (`run-all --partition K/N`), if it was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<Partition>,
    /// The schedule against its floor, from this report's own trial times
    /// (see [`CriticalPath`]); absent where a trial's place is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critical_path: Option<CriticalPath>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Summary {
    pub trials: usize,
    pub passed: usize,
    pub failed: usize,
    pub snapshots_changed: usize,
}

/// What became of a trial's snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SnapshotStatus {
    Matched,
    /// There was none; insta wrote a `.snap.new` to review.
    New,
    /// It differs from the committed one; insta wrote a `.snap.new` to review.
    Changed,
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
    /// The second GPU of a trial that needs a pair: its child saw both,
    /// `gpu` as its device 0 and this one as its device 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_gpu: Option<u32>,
    /// Where run-all's schedule ran it: beside others, beside light trials
    /// only, or alone (the critical path is read from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<Place>,
    /// Everything recorded, raw figures included.
    pub outcome: Outcome,
    /// Where the committed evidence took this result from a run made after
    /// the full run it stands in ([`evidence`]): that run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<LaterRun>,
}

/// A run of some trials made after the newest full run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaterRun {
    /// Its report, relative to the repository root.
    pub file: String,
    pub source: Source,
    /// When it ran, RFC 3339.
    pub created: String,
    /// The GPU it ran on, as its environment names it.
    #[serde(default)]
    pub gpu: String,
    /// Its driver and CUDA, as its environment names them.
    #[serde(default)]
    pub driver: String,
    #[serde(default)]
    pub cuda: String,
}

/// The committed evidence under `root`: the newest full run
/// ([`EVIDENCE_JSON`]), with the result of each trial run since (the
/// reports in [`SINCE_DIR`], by their names' order, later ones winning) in
/// that trial's place, naming its run. `None` where no full run is
/// committed.
pub fn evidence(root: &Path) -> Result<Option<Report>, String> {
    let Some(mut report) = read(&root.join(EVIDENCE_JSON))? else {
        return Ok(None);
    };
    let mut later: Vec<std::path::PathBuf> = match std::fs::read_dir(root.join(SINCE_DIR)) {
        Ok(dir) => dir
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect(),
        Err(_) => Vec::new(),
    };
    later.sort();
    for path in later {
        let Some(run) = read(&path)? else { continue };
        let file = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        for mut result in run.results {
            result.from = Some(LaterRun {
                file: file.clone(),
                source: run.source.clone(),
                created: run.created.clone(),
                gpu: run.environment.gpu.clone(),
                driver: run.environment.driver.clone(),
                cuda: run.environment.cuda.clone(),
            });
            let trial = result.trial();
            if let Some(at) = report.results.iter().position(|r| r.trial() == trial) {
                report.results[at] = result;
            } else if let Some(at) = report.run.skipped.iter().position(|s| s.trial == trial) {
                // Skipped by the full run for want of something this machine
                // lacked (a second GPU): the later run that had it supplies
                // the result, and the trial is no longer skipped.
                report.run.skipped.remove(at);
                report.results.push(result);
            } else if let Some(at) = report.run.not_run.iter().position(|t| *t == trial) {
                // Not reached by a full run that was stopped (its time ran
                // out): a later run of the same build supplies it.
                if run.source.commit != report.source.commit {
                    return Err(format!(
                        "{file}: {trial} was not reached by the full run of {} and this run is of {}: \
                         it needs a run of the same commit",
                        report.source.commit, run.source.commit
                    ));
                }
                report.run.not_run.remove(at);
                report.results.push(result);
            } else if run.source.commit != report.source.commit {
                // A variant added since the full run: the later run of the
                // build that has it supplies its result, as for a trial the
                // full run did not reach (the catalogue check refuses a
                // result no variant of the catalogue stands for).
                report.results.push(result);
            } else {
                return Err(format!(
                    "{file}: {trial} is not in {EVIDENCE_JSON}, and this run is of the same commit: \
                     a trial the full run lacks needs a run of the build that added it"
                ));
            }
        }
    }
    Ok(Some(report))
}

fn read(path: &Path) -> Result<Option<Report>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

impl ResultEntry {
    /// The trial this is the result of.
    pub fn trial(&self) -> TrialId {
        TrialId::new(&self.scenario, &self.variant)
    }
}

/// Memory still held after a trial, and by whom.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Leftover {
    /// The trial (or group of trials) after which it was seen.
    pub after: String,
    /// Device memory in use over the baseline, in bytes.
    pub bytes_over_baseline: u64,
    /// The processes holding it: `pid 123 (casebook) 4096 MiB, started by fragmentation::broken`.
    pub holders: Vec<String>,
}

impl std::fmt::Display for Leftover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "after {}, {} MiB of device memory are still in use",
            self.after,
            self.bytes_over_baseline >> 20
        )?;
        if self.holders.is_empty() {
            f.write_str(" by no process NVML can see")
        } else {
            write!(f, ", held by {}", self.holders.join("; "))
        }
    }
}

/// A process of a casebook trial whose run has ended, still on a GPU.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Orphan {
    pub pid: u32,
    /// Its process group: the trial and whatever it started.
    pub group: u32,
    /// `<slug>::<variant>` (or the worker role) it runs.
    pub trial: String,
    /// The pid of the harness that started it, no longer running.
    pub run: Option<u32>,
    pub gpu: String,
    /// Device memory it holds, as NVML reports it.
    pub memory: String,
}

impl Report {
    /// A report of `results`, counted, made now from a build of `source`.
    pub fn new(
        source: Source,
        environment: Environment,
        results: Vec<ResultEntry>,
        wall_seconds: f64,
    ) -> Self {
        let count =
            |keep: &dyn Fn(&ResultEntry) -> bool| results.iter().filter(|r| keep(r)).count();
        let summary = Summary {
            trials: results.len(),
            passed: count(&|r| r.verdict == Verdict::Pass),
            failed: count(&|r| r.verdict == Verdict::Fail),
            snapshots_changed: count(&|r| r.snapshot != SnapshotStatus::Matched),
        };
        Report {
            schema: 1,
            created: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            casebook_version: env!("CARGO_PKG_VERSION").to_owned(),
            source,
            environment,
            wall_seconds,
            summary,
            results,
            run: RunFacts::default(),
            bench: None,
        }
    }

    /// The schedule against its floor, where every trial's place is
    /// recorded.
    pub fn critical_path(&self) -> Option<CriticalPath> {
        let trials: Option<Vec<(Place, f64)>> = self
            .results
            .iter()
            .map(|r| Some((r.place?, r.seconds)))
            .collect();
        let trials = trials.filter(|t| !t.is_empty())?;
        Some(CriticalPath::of(
            trials,
            self.run.gpus.len(),
            self.wall_seconds,
        ))
    }

    /// The result of `trial`, if the run has one.
    pub fn result(&self, trial: &TrialId) -> Option<&ResultEntry> {
        self.results
            .iter()
            .find(|r| r.scenario == trial.scenario && r.variant == trial.variant)
    }
}

/// Fixtures for the tests of the crates that read reports.
pub mod fixture {
    use super::*;

    /// A passing result of `scenario::variant`, a cudarc `broken` that
    /// recorded nothing, for a test to change what it reads: a new field of
    /// [`ResultEntry`] is written here once, not in every test's fixture.
    pub fn result(scenario: &str, variant: &str) -> ResultEntry {
        ResultEntry {
            scenario: scenario.into(),
            variant: variant.into(),
            role: Role::Broken,
            binding: Binding::Cudarc,
            expected: String::new(),
            observed: String::new(),
            verdict: Verdict::Pass,
            reason: None,
            symptoms: vec![],
            claims: vec![],
            snapshot: SnapshotStatus::Matched,
            seconds: 0.0,
            gpu: None,
            pair_gpu: None,
            place: None,
            outcome: Outcome::empty(),
            from: None,
        }
    }

    /// A machine for a test's report: one GPU named `gpu`.
    pub fn environment(gpu: &str) -> Environment {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(variant: &str, seconds: f64) -> ResultEntry {
        ResultEntry {
            seconds,
            ..fixture::result("missing-free", variant)
        }
    }

    fn write(path: &Path, commit: &str, results: Vec<ResultEntry>) {
        let source = Source {
            commit: commit.into(),
            dirty: false,
        };
        let report = Report::new(source, fixture::environment("GPU"), results, 1.0);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, serde_json::to_string(&report).unwrap()).unwrap();
    }

    /// A full run of one trial, `missing-free::broken`.
    fn full_run() -> Report {
        Report::new(
            Source::default(),
            fixture::environment("GPU"),
            vec![result("broken", 1.0)],
            1.0,
        )
    }

    /// Commits `full` as the newest full run under `root`.
    fn write_full(root: &Path, full: &Report) {
        std::fs::create_dir_all(root.join(EVIDENCE_JSON).parent().unwrap()).unwrap();
        std::fs::write(
            root.join(EVIDENCE_JSON),
            serde_json::to_string(full).unwrap(),
        )
        .unwrap();
    }

    #[test]
    fn a_trial_run_since_the_full_run_stands_in_its_place_and_names_its_run() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        assert!(evidence(root).unwrap().is_none());
        write(
            &root.join(EVIDENCE_JSON),
            "aaaaaaa",
            vec![result("broken", 1.0), result("fixed", 2.0)],
        );
        let full = evidence(root).unwrap().unwrap();
        assert!(full.results.iter().all(|r| r.from.is_none()));
        let since = root.join(SINCE_DIR);
        write(
            &since.join("01-bbbbbbb.json"),
            "bbbbbbb",
            vec![result("fixed", 3.0)],
        );
        write(
            &since.join("02-ccccccc.json"),
            "ccccccc",
            vec![result("fixed", 4.0)],
        );
        let now = evidence(root).unwrap().unwrap();
        assert_eq!(now.source.commit, "aaaaaaa");
        assert_eq!(now.results.len(), 2);
        assert_eq!((now.results[0].seconds, &now.results[0].from), (1.0, &None));
        let fixed = &now.results[1];
        assert_eq!(fixed.seconds, 4.0, "the later run wins");
        let run = fixed.from.as_ref().unwrap();
        assert_eq!(run.source.commit, "ccccccc");
        assert_eq!(run.file, "docs/evidence/since-latest/02-ccccccc.json");
        // A trial the full run lacks, run by a later build (a variant added
        // since), joins the evidence and names its run.
        write(
            &since.join("03-ddddddd.json"),
            "ddddddd",
            vec![result("new", 1.0)],
        );
        let now = evidence(root).unwrap().unwrap();
        let new = now.results.iter().find(|r| r.variant == "new").unwrap();
        assert_eq!(new.from.as_ref().unwrap().source.commit, "ddddddd");
        // Run by the full run's own build, it is a trial that build skipped
        // without saying so: refused.
        write(
            &since.join("04-aaaaaaa.json"),
            "aaaaaaa",
            vec![result("other", 1.0)],
        );
        let err = evidence(root).unwrap_err();
        assert!(err.contains("missing-free::other is not in"), "{err}");
    }

    #[test]
    fn a_trial_the_full_run_skipped_is_supplied_by_a_later_run_that_ran_it() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        let mut full = full_run();
        full.run.skipped.push(Skipped {
            trial: TrialId::new("missing-free", "pair"),
            reason: "needs 2 GPUs of one host".into(),
        });
        write_full(root, &full);
        write(
            &root.join(SINCE_DIR).join("01-bbbbbbb.json"),
            "bbbbbbb",
            vec![result("pair", 2.0)],
        );
        let now = evidence(root).unwrap().unwrap();
        assert!(now.run.skipped.is_empty(), "no longer skipped");
        let pair = now.results.iter().find(|r| r.variant == "pair").unwrap();
        assert_eq!(pair.seconds, 2.0);
        assert_eq!(pair.from.as_ref().unwrap().source.commit, "bbbbbbb");
    }

    #[test]
    fn a_trial_a_stopped_full_run_did_not_reach_is_supplied_by_a_run_of_the_same_build() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        let mut full = full_run();
        full.source.commit = "aaaaaaa".into();
        full.run.not_run.push(TrialId::new("missing-free", "fixed"));
        write_full(root, &full);
        let since = root.join(SINCE_DIR).join("01-bbbbbbb.json");
        write(&since, "bbbbbbb", vec![result("fixed", 2.0)]);
        let err = evidence(root).unwrap_err();
        assert!(err.contains("needs a run of the same commit"), "{err}");
        write(&since, "aaaaaaa", vec![result("fixed", 2.0)]);
        let now = evidence(root).unwrap().unwrap();
        assert!(now.run.not_run.is_empty(), "no longer not run");
        let fixed = now.results.iter().find(|r| r.variant == "fixed").unwrap();
        assert_eq!(fixed.seconds, 2.0);
    }

    #[test]
    fn a_report_without_places_has_no_critical_path() {
        let env = fixture::environment("GPU");
        let report = Report::new(crate::Source::default(), env, Vec::new(), 1.0);
        assert_eq!(report.critical_path(), None);
    }
}
