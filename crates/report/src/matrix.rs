//! The fleet matrix: run-all reports from several machines (GPU model,
//! driver, CUDA, toolkit), or the shards of one partitioned run, merged into
//! one matrix of scenario × variant × machine.
//!
//! Each cell holds what ran: the verdict, what the variant showed, and the
//! key figures the catalogue measures (what a context costs, how many
//! contexts fit before the driver refuses one, the default device heap,
//! what a cuBLAS handle costs, speed-ups). A difference between machines is
//! flagged, and each machine's value shown: nothing is averaged. The merge
//! refuses what it cannot merge honestly, and names the file: reports of
//! different commits, one built from uncommitted changes, a shard given
//! twice or missing, a trial run twice on one machine, a file that is not a
//! report. It never invents a cell: a trial a machine did not run is empty.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use casebook_model::TrialId;

use crate::partition::Partition;
use crate::run::Report;
use crate::verdict::Verdict;

/// Where the committed fleet matrix is.
pub const MATRIX_JSON: &str = "docs/evidence/matrix.json";

/// A figure's values differ between machines when the largest exceeds the
/// smallest by more than this share of the largest.
pub const FIGURE_TOLERANCE: f64 = 0.02;

/// The figures each cell carries, from the cases' manifests.
pub use crate::key_figures::KEY_FIGURES;

/// A machine, as far as the outcomes can depend on it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Machine {
    pub gpu: String,
    pub gpus: u32,
    pub driver: String,
    pub cuda: String,
    pub toolkit: String,
    /// The PyTorch the Python variants ran under, if any did.
    pub pytorch: Option<String>,
}

impl Machine {
    /// Whether two reports come from the same machine. A report whose
    /// trials include no PyTorch variant (a shard, say) does not say which
    /// PyTorch the machine has, and matches any.
    fn same_as(&self, other: &Machine) -> bool {
        let pytorch = match (&self.pytorch, &other.pytorch) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        pytorch
            && (
                &self.gpu,
                self.gpus,
                &self.driver,
                &self.cuda,
                &self.toolkit,
            ) == (
                &other.gpu,
                other.gpus,
                &other.driver,
                &other.cuda,
                &other.toolkit,
            )
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gpu = self.gpu.strip_prefix("NVIDIA ").unwrap_or(&self.gpu);
        if self.gpus > 1 {
            write!(f, "{} × {}", self.gpus, gpu)?;
        } else {
            f.write_str(gpu)?;
        }
        write!(
            f,
            ", driver {} (CUDA {}), toolkit {}",
            self.driver, self.cuda, self.toolkit
        )
    }
}

/// One column: a machine, and the report files its cells come from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Column {
    pub machine: Machine,
    pub files: Vec<String>,
    pub created: Vec<String>,
    /// Each file's wall time, in seconds.
    pub wall_seconds: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub name: String,
    pub value: f64,
    pub unit: String,
}

/// What one trial did on one machine.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// Against what the variant declares.
    pub verdict: Verdict,
    /// The symptoms it showed (`clean`, `CUDA_ERROR_OUT_OF_MEMORY`, …).
    pub observed: String,
    pub figures: Vec<Figure>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub scenario: String,
    pub variant: String,
    /// One per column; `None` where that machine did not run the trial.
    pub cells: Vec<Option<Cell>>,
    /// What differs between the machines that ran it: `outcome`, or a
    /// figure's name.
    pub differs: Vec<String>,
}

impl Row {
    /// The trial of this row.
    pub fn trial(&self) -> TrialId {
        TrialId::new(&self.scenario, &self.variant)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Matrix {
    /// The commit every report was built from.
    pub commit: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

/// Why reports cannot be merged; each names the file.
#[derive(Debug)]
pub enum MergeError {
    NoReports,
    Unreadable {
        file: PathBuf,
        why: String,
    },
    NotAReport {
        file: PathBuf,
        why: String,
    },
    Dirty {
        file: PathBuf,
        commit: String,
    },
    OtherCommit {
        file: PathBuf,
        commit: String,
        first: PathBuf,
        first_commit: String,
    },
    SameFile {
        file: PathBuf,
    },
    ShardTwice {
        file: PathBuf,
        other: PathBuf,
        shard: Partition,
    },
    ShardsDisagree {
        file: PathBuf,
        other: PathBuf,
        /// The machine, as the matrix names it.
        machine: String,
        shard: String,
        other_shard: String,
    },
    ShardMissing {
        /// The machine, as the matrix names it.
        machine: String,
        missing: Vec<u32>,
        count: u32,
        files: Vec<PathBuf>,
    },
    TrialTwice {
        file: PathBuf,
        other: PathBuf,
        /// The machine, as the matrix names it.
        machine: String,
        trial: TrialId,
    },
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::NoReports => f.write_str("no report to merge"),
            MergeError::Unreadable { file, why } => {
                write!(f, "{}: cannot read it: {why}", file.display())
            }
            MergeError::NotAReport { file, why } => write!(
                f,
                "{}: not a casebook run-all report ({why})",
                file.display()
            ),
            MergeError::Dirty { file, commit } => write!(
                f,
                "{}: built from uncommitted changes on top of {commit}, so no commit says what \
                 ran; rebuild from a commit",
                file.display()
            ),
            MergeError::OtherCommit {
                file,
                commit,
                first,
                first_commit,
            } => write!(
                f,
                "{}: built from commit {commit}, but {} from {first_commit}; a matrix merges the \
                 reports of one commit",
                file.display(),
                first.display()
            ),
            MergeError::SameFile { file } => {
                write!(f, "{}: given twice", file.display())
            }
            MergeError::ShardTwice { file, other, shard } => write!(
                f,
                "{}: shard {shard} again, as {} is; each shard of a run is merged once",
                file.display(),
                other.display()
            ),
            MergeError::ShardsDisagree {
                file,
                other,
                machine,
                shard,
                other_shard,
            } => write!(
                f,
                "{}: {shard} on {machine}, but {} there is {other_shard}; a machine's reports \
                 are one whole run or the shards of one partition",
                file.display(),
                other.display()
            ),
            MergeError::ShardMissing {
                machine,
                missing,
                count,
                files,
            } => {
                let missing: Vec<String> = missing.iter().map(|k| format!("{k}/{count}")).collect();
                let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
                write!(
                    f,
                    "shard {} of the run on {machine} is missing (given: {})",
                    missing.join(", "),
                    files.join(", ")
                )
            }
            MergeError::TrialTwice {
                file,
                other,
                machine,
                trial,
            } => write!(
                f,
                "{}: runs {trial} on {machine}, as {} does; give one report per machine, or \
                 the shards of one partitioned run",
                file.display(),
                other.display()
            ),
        }
    }
}

impl std::error::Error for MergeError {}

/// Reads a report, or says why the file is not one.
pub fn read_report(file: &Path) -> Result<Report, MergeError> {
    let text = std::fs::read_to_string(file).map_err(|e| MergeError::Unreadable {
        file: file.to_path_buf(),
        why: e.to_string(),
    })?;
    serde_json::from_str(&text).map_err(|e| MergeError::NotAReport {
        file: file.to_path_buf(),
        why: e.to_string(),
    })
}

fn machine_of(report: &Report) -> Machine {
    let env = &report.environment;
    Machine {
        gpu: env.gpu.clone(),
        // The GPUs the run was spread over, or the ones it saw.
        gpus: if report.run.gpus.is_empty() {
            env.device_count
        } else {
            report.run.gpus.len() as u32
        },
        driver: env.driver.clone(),
        cuda: env.cuda.clone(),
        toolkit: env.toolkit.clone(),
        pytorch: report.run.pytorch.clone(),
    }
}

/// Merges the reports in `files`, in that order of columns (a machine's
/// column where its first report stands).
pub fn merge(files: &[PathBuf]) -> Result<Matrix, MergeError> {
    let reports = files
        .iter()
        .map(|f| read_report(f).map(|r| (f.clone(), r)))
        .collect::<Result<Vec<_>, _>>()?;
    merge_reports(&reports)
}

/// [`merge`] of reports already read, each with its file.
pub fn merge_reports(reports: &[(PathBuf, Report)]) -> Result<Matrix, MergeError> {
    let (first, first_report) = reports.first().ok_or(MergeError::NoReports)?;
    let mut seen_files = BTreeSet::new();
    for (file, report) in reports {
        if !seen_files.insert(file.canonicalize().unwrap_or_else(|_| file.clone())) {
            return Err(MergeError::SameFile { file: file.clone() });
        }
        if report.source.dirty {
            return Err(MergeError::Dirty {
                file: file.clone(),
                commit: report.source.commit.clone(),
            });
        }
        if report.source.commit != first_report.source.commit {
            return Err(MergeError::OtherCommit {
                file: file.clone(),
                commit: report.source.commit.clone(),
                first: first.clone(),
                first_commit: first_report.source.commit.clone(),
            });
        }
    }
    // Each machine's reports: one whole run, or the shards of one partition.
    // A partitioned run is a column of its own beside a whole run on the
    // same kind of machine (one H200, and a host of two that ran two
    // shards): reports group by machine and by how many shards they are of.
    let mut machines: Vec<(Machine, Vec<usize>)> = Vec::new();
    let shards_of = |i: usize| reports[i].1.run.partition.map(|p| p.count);
    for (i, (_, report)) in reports.iter().enumerate() {
        let machine = machine_of(report);
        let found = machines
            .iter_mut()
            .find(|(m, of)| m.same_as(&machine) && shards_of(of[0]) == shards_of(i));
        match found {
            Some((m, of)) => {
                m.pytorch = m.pytorch.take().or(machine.pytorch);
                of.push(i);
            }
            None => machines.push((machine, vec![i])),
        }
    }
    for (machine, of) in &mut machines {
        check_shards(reports, machine, of)?;
        // The shards of one run on several GPUs: the column names them all.
        let gpus: BTreeSet<&str> = of
            .iter()
            .flat_map(|&i| reports[i].1.run.gpus.iter().map(|g| g.uuid.as_str()))
            .collect();
        if of.len() > 1 && gpus.len() > machine.gpus as usize {
            machine.gpus = gpus.len() as u32;
        }
    }
    // The rows: the trials in the order the reports list them.
    let mut order: Vec<(String, String)> = Vec::new();
    let mut cells: BTreeMap<(String, String), Vec<Option<Cell>>> = BTreeMap::new();
    let mut ran_by: BTreeMap<(String, String, usize), usize> = BTreeMap::new();
    for (column, (machine, of)) in machines.iter().enumerate() {
        for &i in of {
            let (file, report) = &reports[i];
            for r in &report.results {
                let key = (r.scenario.clone(), r.variant.clone());
                if let Some(&other) = ran_by.get(&(key.0.clone(), key.1.clone(), column)) {
                    return Err(MergeError::TrialTwice {
                        file: file.clone(),
                        other: reports[other].0.clone(),
                        machine: machine.to_string(),
                        trial: TrialId::new(&key.0, &key.1),
                    });
                }
                ran_by.insert((key.0.clone(), key.1.clone(), column), i);
                let row = cells.entry(key.clone()).or_insert_with(|| {
                    order.push(key.clone());
                    vec![None; machines.len()]
                });
                row[column] = Some(Cell {
                    verdict: r.verdict,
                    observed: r.observed.clone(),
                    figures: KEY_FIGURES
                        .iter()
                        .filter(|(s, v, _, _)| *s == r.scenario && *v == r.variant)
                        .filter_map(|(_, _, measure, _)| {
                            let m = r.outcome.measures.get(*measure)?;
                            Some(Figure {
                                name: (*measure).to_owned(),
                                value: m.value,
                                unit: serde_json::to_value(m.unit)
                                    .ok()
                                    .and_then(|v| v.as_str().map(str::to_owned))
                                    .unwrap_or_default(),
                            })
                        })
                        .collect(),
                });
            }
        }
    }
    let rows = order
        .into_iter()
        .map(|key| {
            let cells = cells.remove(&key).unwrap_or_default();
            let differs = differences(&cells);
            Row {
                scenario: key.0,
                variant: key.1,
                cells,
                differs,
            }
        })
        .collect();
    let columns = machines
        .into_iter()
        .map(|(machine, of)| Column {
            machine,
            files: of
                .iter()
                .map(|&i| reports[i].0.display().to_string())
                .collect(),
            created: of.iter().map(|&i| reports[i].1.created.clone()).collect(),
            wall_seconds: of.iter().map(|&i| reports[i].1.wall_seconds).collect(),
        })
        .collect();
    Ok(Matrix {
        commit: first_report.source.commit.clone(),
        columns,
        rows,
    })
}

/// A machine's reports must be one whole run, or every shard of one
/// partition once.
fn check_shards(
    reports: &[(PathBuf, Report)],
    machine: &Machine,
    of: &[usize],
) -> Result<(), MergeError> {
    let shard_text = |p: Option<Partition>| match p {
        Some(p) => format!("shard {p}"),
        None => "a whole run".to_owned(),
    };
    let (first_file, first) = &reports[of[0]];
    let first_shard = first.run.partition;
    let mut by_shard: BTreeMap<u32, &PathBuf> = BTreeMap::new();
    for &i in of {
        let (file, report) = &reports[i];
        let shard = report.run.partition;
        match (first_shard, shard) {
            (Some(a), Some(b)) if a.count == b.count => {
                if let Some(other) = by_shard.insert(b.index, file) {
                    return Err(MergeError::ShardTwice {
                        file: file.clone(),
                        other: other.clone(),
                        shard: b,
                    });
                }
            }
            // Two whole runs of one machine: the trials repeat, which the
            // merge reports trial by trial.
            (None, None) => {}
            _ => {
                return Err(MergeError::ShardsDisagree {
                    file: file.clone(),
                    other: first_file.clone(),
                    machine: machine.to_string(),
                    shard: shard_text(shard),
                    other_shard: shard_text(first_shard),
                });
            }
        }
    }
    if let Some(p) = first_shard {
        let missing: Vec<u32> = (1..=p.count)
            .filter(|k| !by_shard.contains_key(k))
            .collect();
        if !missing.is_empty() {
            return Err(MergeError::ShardMissing {
                machine: machine.to_string(),
                missing,
                count: p.count,
                files: of.iter().map(|&i| reports[i].0.clone()).collect(),
            });
        }
    }
    Ok(())
}

/// What differs between the cells that ran: the outcome, or a figure
/// beyond [`FIGURE_TOLERANCE`].
fn differences(cells: &[Option<Cell>]) -> Vec<String> {
    let ran: Vec<&Cell> = cells.iter().flatten().collect();
    let mut differs = Vec::new();
    if ran
        .windows(2)
        .any(|w| w[0].verdict != w[1].verdict || w[0].observed != w[1].observed)
    {
        differs.push("outcome".to_owned());
    }
    let names: BTreeSet<&str> = ran
        .iter()
        .flat_map(|c| c.figures.iter().map(|f| f.name.as_str()))
        .collect();
    for name in names {
        let values: Vec<f64> = ran
            .iter()
            .filter_map(|c| c.figures.iter().find(|f| f.name == name))
            .map(|f| f.value)
            .collect();
        let (lo, hi) = values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(*v), hi.max(*v))
            });
        // A figure one machine recorded and another did not differs too.
        let missing = values.len() != ran.len();
        if missing || (hi > 0.0 && (hi - lo) / hi.abs() > FIGURE_TOLERANCE) {
            differs.push(name.to_owned());
        }
    }
    differs
}

fn figure_text(f: &Figure) -> String {
    match f.unit.as_str() {
        "bytes" => format!("{:.0} MiB", f.value / (1 << 20) as f64),
        "count" => format!("{:.0}", f.value),
        "factor" | "ratio" => format!("{:.1}×", f.value),
        _ => format!("{:.3} {}", f.value, f.unit),
    }
}

impl Matrix {
    /// The cookbook page.
    pub fn markdown(&self) -> String {
        let mut md = String::from("# The same failures on other GPUs\n\n");
        let _ = writeln!(
            md,
            "Every trial of the catalogue as it stood at commit {} (the introduction counts \
             the catalogue as it is now), run on each machine below and merged by \
             `casebook matrix`. A cell is the verdict against what the variant \
             declares, what it showed, and the figures that tell machines apart. Where the \
             machines differ the row is flagged (**differs**) and each machine's value shown; \
             a figure differs when the largest exceeds the smallest by more than {:.0}% of it. \
             An empty cell is a trial that machine did not run.\n",
            short(&self.commit),
            FIGURE_TOLERANCE * 100.0
        );
        md.push_str("| machine | reports | wall time |\n|---|---|---|\n");
        for c in &self.columns {
            let walls: Vec<String> = c.wall_seconds.iter().map(|s| format!("{s:.1} s")).collect();
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                c.machine,
                c.files
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                walls.join(" + ")
            );
        }
        md.push('\n');
        // The key figures first, one row each.
        md.push_str("## Key figures\n\n");
        md.push_str(&self.table_head(&["figure", "trial"]));
        for (scenario, variant, measure, what) in KEY_FIGURES {
            let Some(row) = self
                .rows
                .iter()
                .find(|r| r.scenario == *scenario && r.variant == *variant)
            else {
                continue;
            };
            let _ = write!(md, "| {what} | {} |", TrialId::new(*scenario, *variant));
            for cell in &row.cells {
                let value = cell
                    .as_ref()
                    .and_then(|c| c.figures.iter().find(|f| f.name == *measure))
                    .map(figure_text)
                    .unwrap_or_default();
                let _ = write!(md, " {value} |");
            }
            let flag = if row.differs.iter().any(|d| d == measure) {
                "**differs**"
            } else {
                ""
            };
            let _ = writeln!(md, " {flag} |");
        }
        let differing = self.rows.iter().filter(|r| !r.differs.is_empty()).count();
        let _ = writeln!(
            md,
            "\n## Every trial\n\n{} trials of that commit; {} differ between the machines.\n",
            self.rows.len(),
            differing
        );
        md.push_str(&self.table_head(&["trial"]));
        for row in &self.rows {
            let _ = write!(md, "| {} |", row.trial());
            for cell in &row.cells {
                let text = cell
                    .as_ref()
                    .map(|c| format!("{}: {}", c.verdict.word(), c.observed.replace('|', "\\|")))
                    .unwrap_or_default();
                let _ = write!(md, " {text} |");
            }
            let flag = if row.differs.is_empty() {
                String::new()
            } else {
                format!("**differs**: {}", row.differs.join(", "))
            };
            let _ = writeln!(md, " {flag} |");
        }
        md
    }
}

impl Matrix {
    /// A table's head: `first` columns, one per machine, then the flag.
    fn table_head(&self, first: &[&str]) -> String {
        let heads: Vec<String> = first
            .iter()
            .map(|h| (*h).to_owned())
            .chain(self.columns.iter().map(|c| column_head(&c.machine)))
            .chain(["between machines".to_owned()])
            .collect();
        format!(
            "| {} |\n|{}\n",
            heads.join(" | "),
            "---|".repeat(heads.len())
        )
    }
}

fn column_head(m: &Machine) -> String {
    let gpu = m.gpu.strip_prefix("NVIDIA ").unwrap_or(&m.gpu);
    if m.gpus > 1 {
        format!("{} × {gpu}", m.gpus)
    } else {
        gpu.to_owned()
    }
}

fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report of `trials` (`scenario::variant`, what it showed) built from
    /// `commit` on one `gpu`, as shard `partition` if given.
    fn report(commit: &str, gpu: &str, partition: Option<&str>, trials: &[(&str, &str)]) -> Report {
        let results: Vec<serde_json::Value> = trials
            .iter()
            .map(|(trial, observed)| {
                let TrialId { scenario, variant } = trial.parse().unwrap();
                let mut outcome = serde_json::to_value(casebook_model::Outcome::empty()).unwrap();
                if *trial == "context-leak::broken" {
                    outcome["measures"] = serde_json::json!({
                        "bytes_per_context": {"value": 549e6, "unit": "bytes"},
                        "calls_completed": {"value": if gpu.contains("L4") { 60.0 } else { 101.0 }, "unit": "count"},
                    });
                }
                serde_json::json!({
                    "scenario": scenario, "variant": variant, "role": "broken",
                    "binding": "cudarc", "expected": "fails", "observed": observed,
                    "verdict": "pass", "reason": null, "symptoms": [], "claims": [],
                    "snapshot": "matched", "seconds": 1.0, "outcome": outcome,
                })
            })
            .collect();
        let partition = partition.map(|p| {
            let p: Partition = p.parse().unwrap();
            serde_json::to_value(p).unwrap()
        });
        serde_json::from_value(serde_json::json!({
            "schema": 1, "created": "2026-11-22T00:00:00Z", "casebook_version": "0.1.0",
            "source": {"commit": commit, "dirty": false},
            "environment": {
                "gpu": gpu, "driver": "580.159.04", "cuda": "13.0", "toolkit": "13.0.88",
                "compute_capability": "9.0", "memory_total_bytes": 1, "device_count": 1,
            },
            "wall_seconds": 10.0,
            "summary": {"trials": trials.len(), "passed": trials.len(), "failed": 0, "snapshots_changed": 0},
            "results": results,
            "run": {
                "jobs": 8, "interrupted": null, "not_run": [], "leftovers": [],
                "leftover_check_off": null, "partition": partition,
            },
        }))
        .unwrap()
    }

    const TRIALS: &[(&str, &str)] = &[
        ("context-leak::broken", "CUDA_ERROR_OUT_OF_MEMORY"),
        ("missing-free::fixed", "clean"),
        ("sticky-error::broken", "CUDA_ERROR_ILLEGAL_ADDRESS"),
    ];

    fn files(reports: Vec<(&str, Report)>) -> Vec<(PathBuf, Report)> {
        reports
            .into_iter()
            .map(|(f, r)| (PathBuf::from(f), r))
            .collect()
    }

    /// `file`, shard `k_of_n` of a run on one H200 that ran `trials`.
    fn shard<'a>(file: &'a str, k_of_n: &str, trials: &[(&str, &str)]) -> (&'a str, Report) {
        (file, report("abc", "NVIDIA H200", Some(k_of_n), trials))
    }

    fn error(reports: Vec<(&str, Report)>) -> String {
        merge_reports(&files(reports)).unwrap_err().to_string()
    }

    #[test]
    fn machines_become_columns_and_differences_are_flagged_with_each_value() {
        let mut l4 = TRIALS.to_vec();
        l4[2].1 = "CUDA_ERROR_LAUNCH_FAILED";
        let m = merge_reports(&files(vec![
            (
                "h100.json",
                report("abc", "NVIDIA H100 80GB HBM3", None, TRIALS),
            ),
            ("l4.json", report("abc", "NVIDIA L4", None, &l4)),
        ]))
        .unwrap();
        assert_eq!(m.columns.len(), 2);
        assert_eq!(m.rows.len(), 3);
        let row = |t: &str| m.rows.iter().find(|r| r.trial() == t).unwrap();
        assert_eq!(row("context-leak::broken").differs, vec!["calls_completed"]);
        assert_eq!(row("sticky-error::broken").differs, vec!["outcome"]);
        assert!(row("missing-free::fixed").differs.is_empty());
        let md = m.markdown();
        assert!(md.contains("| 101 | 60 | **differs** |"), "{md}");
        assert!(md.contains("CUDA_ERROR_LAUNCH_FAILED"), "{md}");
    }

    #[test]
    fn a_shard_that_ran_no_pytorch_variant_joins_the_shard_that_names_pytorch() {
        let (a, mut with) = shard("a.json", "1/2", &TRIALS[..2]);
        with.run.pytorch = Some("2.11.0+cu130, CUDA 13.0".into());
        let m = merge_reports(&files(vec![
            (a, with),
            shard("b.json", "2/2", &TRIALS[2..]),
        ]))
        .unwrap();
        assert_eq!(m.columns.len(), 1);
        assert_eq!(
            m.columns[0].machine.pytorch.as_deref(),
            Some("2.11.0+cu130, CUDA 13.0")
        );
        // Two PyTorch versions are two machines: each shard set is then
        // incomplete.
        let (a, mut one) = shard("a.json", "1/2", &TRIALS[..2]);
        one.run.pytorch = Some("2.11.0+cu130, CUDA 13.0".into());
        let (b, mut other) = shard("b.json", "2/2", &TRIALS[2..]);
        other.run.pytorch = Some("2.10.0+cu128, CUDA 12.8".into());
        assert!(error(vec![(a, one), (b, other)]).contains("is missing"));
    }

    #[test]
    fn the_shards_of_one_run_make_one_column_and_a_trial_no_shard_ran_stays_empty() {
        let m = merge_reports(&files(vec![
            shard("a.json", "1/2", &TRIALS[..2]),
            shard("b.json", "2/2", &TRIALS[2..]),
            (
                "h100.json",
                report("abc", "NVIDIA H100 80GB HBM3", None, &TRIALS[..1]),
            ),
        ]))
        .unwrap();
        assert_eq!(m.columns.len(), 2);
        assert_eq!(m.columns[0].files, vec!["a.json", "b.json"]);
        assert!(m.rows.iter().all(|r| r.cells[0].is_some()));
        // Never invented: the H100 ran one trial.
        assert_eq!(m.rows.iter().filter(|r| r.cells[1].is_some()).count(), 1);
    }

    #[test]
    fn reports_of_different_commits_are_refused_naming_the_file() {
        let e = error(vec![
            (
                "h100.json",
                report("abc", "NVIDIA H100 80GB HBM3", None, TRIALS),
            ),
            ("h200.json", report("def", "NVIDIA H200", None, TRIALS)),
        ]);
        assert!(
            e.starts_with("h200.json: built from commit def, but h100.json from abc"),
            "{e}"
        );
    }

    #[test]
    fn a_report_from_uncommitted_changes_is_refused() {
        let mut dirty = report("abc", "NVIDIA H200", None, TRIALS);
        dirty.source.dirty = true;
        let e = error(vec![("dirty.json", dirty)]);
        assert!(
            e.starts_with("dirty.json: built from uncommitted changes"),
            "{e}"
        );
    }

    #[test]
    fn a_shard_given_twice_or_missing_is_refused() {
        let e = error(vec![
            shard("a.json", "1/2", &TRIALS[..2]),
            shard("b.json", "1/2", &TRIALS[2..]),
        ]);
        assert!(
            e.starts_with("b.json: shard 1/2 again, as a.json is"),
            "{e}"
        );
        let e = error(vec![
            shard("a.json", "1/3", &TRIALS[..1]),
            shard("c.json", "3/3", &TRIALS[2..]),
        ]);
        assert!(e.starts_with("shard 2/3 of the run on H200"), "{e}");
        assert!(e.contains("given: a.json, c.json"), "{e}");
        // A whole run and a lone shard of one machine, or shards of two
        // partitions: each partitioned run lacks shards.
        let e = error(vec![
            ("whole.json", report("abc", "NVIDIA H200", None, TRIALS)),
            shard("a.json", "1/2", &TRIALS[..1]),
        ]);
        assert!(e.starts_with("shard 2/2 of the run on H200"), "{e}");
        assert!(e.contains("given: a.json"), "{e}");
        let e = error(vec![
            shard("a.json", "1/2", &TRIALS[..1]),
            shard("b.json", "2/3", &TRIALS[1..]),
        ]);
        assert!(e.starts_with("shard 2/2 of the run on H200"), "{e}");
    }

    #[test]
    fn a_whole_run_and_the_shards_of_another_on_the_same_kind_of_gpu_are_two_columns() {
        let m = merge_reports(&files(vec![
            ("whole.json", report("abc", "NVIDIA H200", None, TRIALS)),
            shard("a.json", "1/2", &TRIALS[..2]),
            shard("b.json", "2/2", &TRIALS[2..]),
        ]))
        .unwrap();
        assert_eq!(m.columns.len(), 2);
        assert_eq!(m.columns[1].files, ["a.json", "b.json"]);
    }

    #[test]
    fn a_machine_that_runs_a_trial_twice_is_refused() {
        let e = error(vec![
            ("one.json", report("abc", "NVIDIA H200", None, TRIALS)),
            ("two.json", report("abc", "NVIDIA H200", None, &TRIALS[..1])),
        ]);
        assert!(
            e.starts_with("two.json: runs context-leak::broken on H200"),
            "{e}"
        );
    }

    #[test]
    fn a_file_that_is_not_a_report_or_is_given_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("sanitize.json");
        std::fs::write(&junk, "{\"cells\": []}").unwrap();
        let e = merge(std::slice::from_ref(&junk)).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "{}: not a casebook run-all report",
                junk.display()
            )),
            "{e}"
        );
        let missing = dir.path().join("nowhere.json");
        let e = merge(std::slice::from_ref(&missing))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("{}: cannot read it", missing.display())),
            "{e}"
        );
        let good = dir.path().join("h100.json");
        let r = report("abc", "NVIDIA H100 80GB HBM3", None, TRIALS);
        std::fs::write(&good, serde_json::to_string(&r).unwrap()).unwrap();
        let e = merge(&[good.clone(), good.clone()])
            .unwrap_err()
            .to_string();
        assert!(e.ends_with("given twice"), "{e}");
        assert!(merge(&[]).is_err());
    }

    #[test]
    fn the_committed_shards_of_the_two_gpu_run_merge_into_one_whole_column_beside_the_others() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let shards = [
            root.join("docs/evidence/h200x2-shard1.json"),
            root.join("docs/evidence/h200x2-shard2.json"),
        ];
        let m = merge(&shards).unwrap();
        assert_eq!(m.columns.len(), 1);
        let trials: usize = shards
            .iter()
            .map(|f| read_report(f).unwrap().summary.trials)
            .sum();
        assert_eq!(m.rows.len(), trials);
        assert!(m.rows.iter().all(|r| r.cells[0].is_some()));
        // One shard alone is missing the other.
        let e = merge(&shards[..1]).unwrap_err().to_string();
        assert!(e.starts_with("shard 2/2 of the run on H200"), "{e}");
        // With the H100 and one-H200 runs of the same commit (the fleet):
        // three columns, the last on two GPUs.
        let mut all = vec![
            root.join("docs/evidence/h100-fleet.json"),
            root.join("docs/evidence/h200-cross-check.json"),
        ];
        all.extend(shards.iter().cloned());
        let m = merge(&all).unwrap();
        assert_eq!(m.columns.len(), 3);
        assert_eq!(m.columns[2].machine.gpus, 2);
    }

    #[test]
    fn every_key_figure_is_a_measure_its_scenario_declares() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for (scenario, _, measure, _) in KEY_FIGURES {
            let names =
                std::fs::read_to_string(root.join("scenarios").join(scenario).join("names.toml"))
                    .unwrap();
            assert!(
                names.contains(&format!("key = \"{measure}\"")),
                "{scenario}: {measure}"
            );
        }
    }
}
