//! `casebook sanitize`: every variant under NVIDIA's compute-sanitizer, in
//! five configurations, recorded as a detection matrix.
//!
//! Each cell (a trial under one tool) is a job of the one scheduler, run by
//! the executor with compute-sanitizer wrapped around it
//! ([`crate::runner::sanitizer`]) and judged by [`crate::judge::cell`]. The
//! cells that share a GPU run first, `jobs` at a time on each GPU, the
//! longest first (by the last committed pass) so no long cell starts last;
//! then those that fill the GPU even in their reduced form, one at a time
//! on each. This command's own retry policy follows: a cell its neighbours
//! spoiled runs again alone ([`retry_alone`]), and only that run counts.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use casebook_model::{Expect, Scenario, Variant};
use casebook_report::sanitizer::{API_ERROR, Cell, SanitizeReport, TOOLS};
use casebook_report::{Exit, SnapshotStatus, TrialId};
use casebook_runtime::isolation;

use crate::commands::{self, prepare};
use crate::judge::cell::{self as judge, TIME_LIMIT};
use crate::reporter::{progress, report, snapshot, table};
use crate::runner::scheduler::{self, Job, Placement};
use crate::runner::{Trial, sanitizer};
use casebook_report::Place;

pub struct Options {
    pub filters: Vec<String>,
    pub out: PathBuf,
    pub jobs: usize,
}

/// One cell of the pass: a trial under tool number `tool` of [`TOOLS`].
#[derive(Clone, Copy)]
struct Work<'a> {
    trial: Trial<'a>,
    tool: usize,
}

impl Work<'_> {
    fn is(&self, cell: &Cell) -> bool {
        self.trial.scenario.slug == cell.scenario
            && self.trial.variant.name == cell.variant
            && TOOLS[self.tool].0 == cell.tool
    }
}

pub fn run(catalog: &[Scenario], options: &Options) -> ExitCode {
    // The GPU first: a machine with neither a GPU nor the tool has no GPU (3).
    let prepared = match prepare(catalog, &options.filters, "sanitize") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let Some(program) = sanitizer::find() else {
        eprintln!("error: compute-sanitizer not found on PATH or in /usr/local/cuda/bin");
        return Exit::NoSanitizer.into();
    };
    let version = sanitizer::version(&program);
    // The cells in the order they will be reported.
    let work: Vec<Work> = prepared
        .trials
        .iter()
        .flat_map(|&trial| (0..TOOLS.len()).map(move |tool| Work { trial, tool }))
        .collect();
    let environment = prepared.environment;
    eprintln!("{version} on {}: {} runs", environment.gpu, work.len());
    let started = Instant::now();
    let expected = expected_seconds(&crate::workspace::root());
    let alone = |w: &Work| w.trial.scenario.runs_alone_under_sanitizer(w.trial.variant);
    // The cells that share the GPU start longest first; those that run
    // alone keep their order.
    let job = |k: usize| {
        let w = &work[k];
        let trial = w.trial.name();
        if alone(w) {
            Job {
                trial,
                // A pair trial has its two GPUs to itself under the tool too.
                place: if w.trial.scenario.needs_pair() {
                    Place::Pair
                } else {
                    Place::Alone
                },
                expected: None,
            }
        } else {
            let seconds = expected.get(&(trial.clone(), TOOLS[w.tool].0.to_owned()));
            Job {
                trial,
                place: Place::Shared,
                expected: Some(seconds.copied().unwrap_or(TIME_LIMIT.as_secs_f64())),
            }
        }
    };
    let (shared, exclusive): (Vec<usize>, Vec<usize>) =
        (0..work.len()).partition(|&k| !alone(&work[k]));
    let mut done: Vec<Cell> = Vec::new();
    let total = work.len();
    // Each cell is also appended here as it finishes, so an interrupted pass
    // keeps what it measured.
    let _ = std::fs::create_dir_all(&options.out);
    let mut kept = std::fs::File::create(options.out.join("sanitize-cells.jsonl")).ok();
    let mut keep = |cell: &Cell| {
        if let Some(file) = kept.as_mut() {
            use std::io::Write as _;
            let _ = writeln!(file, "{}", serde_json::to_string(cell).unwrap_or_default());
        }
    };
    let gpus = &prepared.gpus;
    if gpus.len() > 1 {
        eprintln!("spread over {} GPUs", gpus.len());
    }
    let placement = Placement {
        gpus: gpus.clone(),
        monitor: None,
    };
    // Runs the cells `which` of `work` through the scheduler, `per_gpu` at a
    // time on each GPU.
    let pass = |which: &[usize], per_gpu: usize, on_done: &mut dyn FnMut(usize, Cell)| {
        let jobs: Vec<Job> = which.iter().map(|&k| job(k)).collect();
        scheduler::run(
            &jobs,
            per_gpu,
            &placement,
            |i, gpus| {
                let w = work[which[i]];
                sanitizer::run_cell(&program, w.trial, w.tool, gpus)
            },
            |i, cell, _| on_done(which[i], cell),
        );
    };
    // Cells spoiled beside others (see `retry_alone`), to run again alone:
    // their places in `work`.
    let mut again: Vec<usize> = Vec::new();
    let mut record = |k: usize, cell: Cell| {
        keep(&cell);
        let trial = work[k].trial;
        if retry_alone(trial.scenario, trial.variant, &cell) {
            again.push(k);
        }
        done.push(cell);
        let at = format!("{:>3}/{total}", done.len());
        eprintln!("{}", progress::cell(&at, done.last().expect("pushed")));
    };
    // The shared cells, `jobs` at a time on each GPU; then the others, one
    // at a time on each.
    pass(&shared, options.jobs, &mut record);
    pass(&exclusive, 1, &mut record);
    if !again.is_empty() && !isolation::interrupted() {
        eprintln!(
            "{} cell(s) spoiled beside others (a clean variant timed out, or the variant ran \
             out of memory it does not declare): each runs again alone",
            again.len()
        );
        let count = again.len();
        let mut n = 0;
        pass(&again, 1, &mut |_, mut cell: Cell| {
            cell.retried_alone = true;
            keep(&cell);
            n += 1;
            eprintln!("{}", progress::cell(&format!("alone {n}/{count}"), &cell));
            let same = |c: &Cell| {
                (&c.scenario, &c.variant, &c.tool) == (&cell.scenario, &cell.variant, &cell.tool)
            };
            if let Some(slot) = done.iter_mut().find(|c| same(c)) {
                *slot = cell;
            }
        });
    }
    let mut cells = done;
    cells.sort_by_key(|c| work.iter().position(|w| w.is(c)).unwrap_or(usize::MAX));
    let report = SanitizeReport {
        created: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        environment,
        sanitizer: version,
        wall_seconds: started.elapsed().as_secs_f64(),
        cells,
    };
    finish(catalog, &options.out, &report)
}

/// Whether `cell` runs again, alone on its GPU, after the pass, because
/// its neighbours spoiled it while it shared the GPU with other cells:
/// - a variant expected clean timed out: many instrumented processes side
///   by side slow each other, and outliving the limit there says nothing
///   about the variant (one that times out alone too still fails);
/// - the variant ran out of device memory (the tool reports it from a CUDA
///   call, or the variant's own first failed call says so), which it does
///   neither by its declaration nor on purpose: the neighbours took the
///   memory, and the tool then "catches" that instead of the variant's bug
///   (index-overflow::broken-cpp's 8.6 GB allocation did so once), or sees
///   a fixed variant stop before its fix and calls it clean.
///
/// Only the run alone counts, and it is not run again.
pub fn retry_alone(s: &Scenario, v: &Variant, cell: &Cell) -> bool {
    let timed_out = cell.timed_out && !cell.passed;
    let starved = (cell
        .kinds
        .iter()
        .any(|k| k.starts_with(API_ERROR) && out_of_memory(k))
        || cell.first_error.as_deref().is_some_and(out_of_memory))
        && !declares_out_of_memory(v)
        && !cell.provokes;
    !s.runs_alone_under_sanitizer(v) && !cell.retried_alone && (timed_out || starved)
}

/// Whether an error's name says device memory ran out: the driver's
/// `CUDA_ERROR_OUT_OF_MEMORY`, the runtime's `cudaErrorMemoryAllocation`,
/// PyTorch's "CUDA out of memory".
fn out_of_memory(error: &str) -> bool {
    [
        "OUT_OF_MEMORY",
        "cudaErrorMemoryAllocation",
        "out of memory",
    ]
    .iter()
    .any(|name| error.contains(name))
}

/// Whether running out of device memory is what `v` shows, or what its
/// libraries do under the tool by its declaration.
fn declares_out_of_memory(v: &Variant) -> bool {
    let shows = |symptom: &casebook_model::Symptom| matches!(symptom, casebook_model::Symptom::CudaError(name) if out_of_memory(name));
    matches!(&v.expect, Expect::Fails(symptom) if shows(symptom))
        || v.then_shows.iter().any(shows)
        || v.sanitizer_sees
            .is_some_and(|sees| sees.kinds.iter().any(|k| out_of_memory(k)))
}

/// Where each cell's expected seconds come from: the committed matrix.
pub const EXPECTED_FROM: &str = casebook_report::sanitizer::SANITIZE_JSON;

/// Each cell's seconds, by (trial, tool), in the report at
/// [`EXPECTED_FROM`] under `root`; empty when there is none.
pub fn expected_seconds(root: &Path) -> HashMap<(TrialId, String), f64> {
    std::fs::read_to_string(root.join(EXPECTED_FROM))
        .ok()
        .and_then(|text| serde_json::from_str::<SanitizeReport>(&text).ok())
        .map(|report| {
            report
                .cells
                .into_iter()
                .map(|c| ((c.trial(), c.tool), c.seconds))
                .collect()
        })
        .unwrap_or_default()
}

/// Builds the report from cells that earlier passes wrote, one JSON line
/// each, with the environment of a run-all report from the same machine;
/// then judges and snapshots it as a pass would. Later files win.
pub fn assemble(
    catalog: &[Scenario],
    options: &Options,
    files: &[PathBuf],
    env_report: &Path,
) -> ExitCode {
    let read = || -> anyhow::Result<SanitizeReport> {
        let report: casebook_report::Report =
            serde_json::from_str(&std::fs::read_to_string(env_report)?)?;
        let mut cells: BTreeMap<(String, String, String), Cell> = BTreeMap::new();
        for file in files {
            for line in std::fs::read_to_string(file)?
                .lines()
                .filter(|l| !l.trim().is_empty())
            {
                let cell: Cell = serde_json::from_str(line)?;
                cells.insert(
                    (
                        cell.scenario.clone(),
                        cell.variant.clone(),
                        cell.tool.clone(),
                    ),
                    cell,
                );
            }
        }
        let order = |c: &Cell| {
            let s = catalog
                .iter()
                .position(|s| s.slug == c.scenario)
                .unwrap_or(usize::MAX);
            let v = catalog
                .get(s)
                .and_then(|s| s.variants.iter().position(|v| v.name == c.variant));
            let t = TOOLS.iter().position(|(t, _)| *t == c.tool);
            (s, v, t)
        };
        let mut cells: Vec<Cell> = cells.into_values().collect();
        // Judged again with today's declarations: the tool's findings are
        // the record, the judgement is derived from them.
        for cell in &mut cells {
            let variant = catalog
                .iter()
                .find(|s| s.slug == cell.scenario)
                .and_then(|s| s.variant(&cell.variant));
            if let Some(v) = variant {
                let verdict = judge::judge(v, cell, cell.started());
                cell.set_verdict(&verdict);
            }
        }
        cells.sort_by_key(order);
        Ok(SanitizeReport {
            created: report.created,
            environment: report.environment,
            // The cells do not say which pass measured them, and an
            // assembled matrix is assembled again with new cells: how many
            // files were given now is not how many passes there were.
            sanitizer: "compute-sanitizer, recorded passes assembled".to_owned(),
            wall_seconds: cells.iter().map(|c| c.seconds).sum(),
            cells,
        })
    };
    match read() {
        Ok(report) => finish(catalog, &options.out, &report),
        Err(e) => {
            eprintln!("error: cannot assemble the sanitizer report: {e:#}");
            Exit::Io.into()
        }
    }
}

fn finish(catalog: &[Scenario], out: &Path, report: &SanitizeReport) -> ExitCode {
    let root = crate::workspace::root();
    let mut changed = 0;
    for s in catalog {
        let view = snapshot::matrix_view(s, &report.cells);
        if view.is_empty() {
            continue;
        }
        if snapshot::compare_matrix(&root, s, &view) != SnapshotStatus::Matched {
            changed += 1;
        }
    }
    let failed = report.cells.iter().filter(|c| !c.passed).count();
    println!("{}", table::sanitizer(catalog, &report.cells));
    println!(
        "{} runs in {:.1} s; {} fixed-variant cells not clean; {changed} matrix snapshot(s) new or changed",
        report.cells.len(),
        report.wall_seconds,
        failed
    );
    let missing = catalog
        .iter()
        .flat_map(|s| s.variants.iter().map(move |v| (s, v)))
        .filter(|(s, v)| {
            TOOLS.iter().any(|(t, _)| {
                !report
                    .cells
                    .iter()
                    .any(|c| c.scenario == s.slug && c.variant == v.name && c.tool == *t)
            })
        });
    for (s, v) in missing {
        eprintln!("not in this pass: {}", s.trial_id(v));
    }
    if let Err(code) = commands::write("the sanitizer report", out, || write(&root, out, report)) {
        return code;
    }
    if failed > 0 {
        Exit::TrialFailed.into()
    } else if changed > 0 {
        Exit::SnapshotsDiffer.into()
    } else {
        ExitCode::SUCCESS
    }
}

/// Writes `sanitize.json` into `out`, and packs the matrix snapshots a
/// pass left to review.
fn write(root: &Path, out: &Path, report: &SanitizeReport) -> std::io::Result<()> {
    report::write_json(out, "sanitize.json", report)?;
    // One matrix snapshot per scenario; pack_snapshots drops the repeats.
    let matrices: Vec<(String, String)> = report
        .cells
        .iter()
        .map(|c| (c.scenario.clone(), "sanitize".to_owned()))
        .collect();
    snapshot::pack_snapshots(root, out, &matrices)?;
    eprintln!("report: {}", out.join("sanitize.json").display());
    Ok(())
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::judge::cell::tests::{cell, program, scenario};

    #[test]
    fn the_committed_matrix_gives_the_cells_their_expected_seconds() {
        let expected = expected_seconds(&crate::workspace::root());
        let key = (
            "missing-free::broken".parse().unwrap(),
            "memcheck-leaks".to_owned(),
        );
        assert!(expected.len() > 100, "{} cells", expected.len());
        assert!(expected.get(&key).is_some_and(|s| *s > 0.0));
    }

    #[test]
    fn only_a_clean_variant_s_timeout_beside_others_runs_again_alone() {
        use casebook_model::{Requirement, Symptom};
        let fixed = || Variant::fixed("v", program());
        let broken = Variant::broken("b", Symptom::cuda_error("E"), program());
        let timed_out = |v: &Variant| {
            let mut c = cell("racecheck", &[]);
            (c.timed_out, c.ran_to_its_end) = (true, Some(false));
            c.set_verdict(&judge::judge(v, &c, true));
            c
        };
        let shared = scenario(Requirement::GPU, vec![fixed(), broken]);
        let (f, b) = (&shared.variants[0], &shared.variants[1]);
        assert!(retry_alone(&shared, f, &timed_out(f)));
        // A broken variant's timeout passes as it is.
        assert!(!retry_alone(&shared, b, &timed_out(b)));
        // Its run alone is final.
        let mut again = timed_out(f);
        again.retried_alone = true;
        assert!(!retry_alone(&shared, f, &again));
        // A cell that ran alone already, and one that failed otherwise.
        let filled = scenario(Requirement::GPU_FILLED, vec![fixed()]);
        assert!(!retry_alone(&filled, &filled.variants[0], &timed_out(f)));
        let mut flagged = cell("racecheck", &["Race reported"]);
        flagged.set_verdict(&judge::judge(f, &flagged, true));
        assert!(!flagged.passed);
        assert!(!retry_alone(&shared, f, &flagged));
    }

    #[test]
    fn an_out_of_memory_the_variant_does_not_declare_runs_again_alone() {
        use casebook_model::{Requirement, Symptom};
        let illegal = Variant::broken(
            "b",
            Symptom::cuda_error("cudaErrorIllegalAddress"),
            program(),
        );
        let leak = Variant::broken(
            "l",
            Symptom::cuda_error("CUDA_ERROR_OUT_OF_MEMORY"),
            program(),
        );
        let after = Variant::broken(
            "a",
            Symptom::check_failed(casebook_model::CheckName("x")),
            program(),
        )
        .then_shows(Symptom::cuda_error("cudaErrorMemoryAllocation"));
        let s = scenario(Requirement::GPU, vec![illegal, leak, after]);
        let starved = |v: &Variant| {
            let mut c = cell("memcheck-leaks", &["API error cudaErrorMemoryAllocation"]);
            c.set_verdict(&judge::judge(v, &c, true));
            c
        };
        let (illegal, leak, after) = (&s.variants[0], &s.variants[1], &s.variants[2]);
        // "Caught", but by what the neighbours did.
        assert!(starved(illegal).passed);
        assert!(retry_alone(&s, illegal, &starved(illegal)));
        assert!(!retry_alone(&s, leak, &starved(leak)));
        assert!(!retry_alone(&s, after, &starved(after)));
        let mut provoked = starved(illegal);
        provoked.provokes = true;
        assert!(!retry_alone(&s, illegal, &provoked));
        let caught = cell(
            "memcheck-leaks",
            &["Invalid __global__ write of size bytes"],
        );
        assert!(!retry_alone(&s, illegal, &caught));
        // racecheck reports no API error: the variant's own failed call
        // says it stopped for want of memory, though the cell looks clean.
        let quiet = Cell {
            first_error: Some("cudaMalloc: cudaErrorMemoryAllocation".to_owned()),
            ..cell("racecheck", &[])
        };
        assert!(retry_alone(&s, illegal, &quiet));
        assert!(!retry_alone(&s, leak, &quiet));
        let other = Cell {
            first_error: Some("cudaDeviceSynchronize: cudaErrorIllegalAddress".to_owned()),
            ..cell("racecheck", &[])
        };
        assert!(!retry_alone(&s, illegal, &other));
    }
}
