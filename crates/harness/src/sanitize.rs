//! `casebook sanitize`: every variant under NVIDIA's compute-sanitizer, in
//! five configurations, recorded as a detection matrix.
//!
//! A tool flags a variant when compute-sanitizer exits with the error exit
//! code given to it (its default is 0, so without one nothing is ever
//! flagged). The kinds of error and the leaked bytes are read from its log.
//! A fixed variant must be clean under every tool, except for the errors it
//! provokes on purpose (its own outcome shows them); a broken variant that a
//! tool misses is a blind spot, and the matrix records it as such.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use casebook_model::{Expect, Role, SANITIZER_ENV, Scenario, Variant};
pub use casebook_report::sanitizer::{
    Cell, CellVerdict, ENDED_BADLY, SanitizeReport, TOOLS, error_kinds, error_sites, leaked,
};
use casebook_report::{Exit, TrialId};

use crate::gpus::Gpu;
use crate::isolation::{self, ChildCommand};

/// How long one variant may run under one tool.
const TIME_LIMIT: Duration = Duration::from_secs(90);

/// compute-sanitizer's exit code when it found errors.
const ERROR_EXIT: i32 = 86;

pub struct Options {
    pub filters: Vec<String>,
    pub out: PathBuf,
    pub jobs: usize,
}

fn find_sanitizer() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("compute-sanitizer"))
        .chain(["/usr/local/cuda/bin/compute-sanitizer".into()])
        .find(|p| p.is_file())
}

pub fn run(catalog: &[Scenario], options: &Options) -> ExitCode {
    // The GPU first: a machine with neither a GPU nor the tool has no GPU (3).
    let prepared = match crate::run_all::prepare(catalog, &options.filters, "sanitize") {
        Ok(p) => p,
        Err(code) => return code,
    };
    let Some(sanitizer) = find_sanitizer() else {
        eprintln!("error: compute-sanitizer not found on PATH or in /usr/local/cuda/bin");
        return Exit::NoSanitizer.into();
    };
    let version = std::process::Command::new(&sanitizer)
        .arg("--version")
        .output()
        .map(|o| {
            let line = String::from_utf8_lossy(&o.stdout)
                .lines()
                .last()
                .unwrap_or("")
                .trim()
                .to_owned();
            format!("compute-sanitizer {line}")
        })
        .unwrap_or_default();
    // (scenario, variant, tool) in the order they will be reported.
    let work: Vec<(&Scenario, &Variant, usize)> = prepared
        .trials
        .iter()
        .flat_map(|t| (0..TOOLS.len()).map(move |tool| (t.scenario, t.variant, tool)))
        .collect();
    let environment = prepared.environment;
    eprintln!("{version} on {}: {} runs", environment.gpu, work.len());
    let started = Instant::now();
    // Variants that fill the GPU even in their reduced form, and those that
    // must run alone, run one at a time on each GPU, after the others have
    // run in parallel, the longest first (by the last committed pass), so
    // no long cell starts last.
    let expected = expected_seconds(&crate::workspace::root());
    let expected = |(s, v, t): &(&Scenario, &Variant, usize)| {
        expected
            .get(&(s.trial_id(v), TOOLS[*t].0.to_owned()))
            .copied()
            .unwrap_or(TIME_LIMIT.as_secs_f64())
    };
    let (mut shared, exclusive): (Vec<_>, Vec<_>) = work
        .iter()
        .copied()
        .partition(|(s, v, _)| !s.runs_alone_under_sanitizer(v));
    shared.sort_by(|a, b| expected(b).total_cmp(&expected(a)));
    let mut done = Vec::new();
    let total = work.len();
    // Each cell is also appended here as it finishes, so an interrupted pass
    // keeps what it measured.
    let _ = std::fs::create_dir_all(&options.out);
    let mut progress = std::fs::File::create(options.out.join("sanitize-cells.jsonl")).ok();
    let keep = |file: &mut Option<std::fs::File>, cell: &Cell| {
        if let Some(file) = file.as_mut() {
            use std::io::Write as _;
            let _ = writeln!(file, "{}", serde_json::to_string(cell).unwrap_or_default());
        }
    };
    // Cells spoiled beside others (see `retry_alone`), to run again alone:
    // their places in `work`.
    let mut again: Vec<usize> = Vec::new();
    let mut record = |(s, v, t): (&Scenario, &Variant, usize), cell: Cell| {
        keep(&mut progress, &cell);
        if retry_alone(s, v, &cell) {
            let same = |(ws, wv, wt): &(&Scenario, &Variant, usize)| {
                std::ptr::eq(*ws, s) && std::ptr::eq(*wv, v) && *wt == t
            };
            again.extend(work.iter().position(same));
        }
        done.push(cell.clone());
        eprintln!(
            "{}",
            cell_line(&format!("{:>3}/{total}", done.len()), s, v, &cell)
        );
    };
    let one = |(s, v, t): (&Scenario, &Variant, usize), gpu: Option<&Gpu>| {
        sanitize_one(&sanitizer, s, v, t, gpu)
    };
    let gpus = &prepared.gpus;
    if gpus.len() > 1 {
        eprintln!("spread over {} GPUs", gpus.len());
    }
    // The shared cells, `jobs` at a time on each GPU; then the others, one
    // at a time on each.
    let shared_lanes = crate::schedule::lanes(gpus, options.jobs);
    crate::schedule::side_by_side(&shared, &shared_lanes, one, &mut record);
    let alone_lanes = crate::schedule::lanes(gpus, 1);
    crate::schedule::side_by_side(&exclusive, &alone_lanes, one, &mut record);
    let again: Vec<_> = again.into_iter().map(|k| work[k]).collect();
    if !again.is_empty() && !isolation::interrupted() {
        eprintln!(
            "{} cell(s) spoiled beside others (a clean variant timed out, or the variant ran \
             out of memory it does not declare): each runs again alone",
            again.len()
        );
        let count = again.len();
        let mut n = 0;
        crate::schedule::side_by_side(&again, &alone_lanes, one, |(s, v, _), mut cell: Cell| {
            cell.retried_alone = true;
            keep(&mut progress, &cell);
            n += 1;
            eprintln!("{}", cell_line(&format!("alone {n}/{count}"), s, v, &cell));
            let same = |c: &Cell| {
                (&c.scenario, &c.variant, &c.tool) == (&cell.scenario, &cell.variant, &cell.tool)
            };
            if let Some(slot) = done.iter_mut().find(|c| same(c)) {
                *slot = cell;
            }
        });
    }
    let mut cells = done;
    let order = |c: &Cell| {
        work.iter()
            .position(|(s, v, t)| {
                s.slug == c.scenario && v.name == c.variant && TOOLS[*t].0 == c.tool
            })
            .unwrap_or(usize::MAX)
    };
    cells.sort_by_key(order);
    let report = SanitizeReport {
        created: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        environment,
        sanitizer: version,
        wall_seconds: started.elapsed().as_secs_f64(),
        cells,
    };
    finish(catalog, &options.out, &report)
}

/// A cell's progress line: `[at] trial tool clean|flagged seconds judgement`.
fn cell_line(at: &str, s: &Scenario, v: &Variant, cell: &Cell) -> String {
    format!(
        "[{at}] {:<40} {:<22} {:<10} {:>6.1} s  {}",
        s.trial_name(v),
        cell.tool,
        if cell.flagged { "flagged" } else { "clean" },
        cell.seconds,
        if cell.passed {
            cell.judgement.clone()
        } else {
            format!("FAIL {}", cell.judgement)
        }
    )
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
        .any(|k| k.starts_with("API error") && out_of_memory(k))
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
pub fn expected_seconds(root: &Path) -> std::collections::HashMap<(TrialId, String), f64> {
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
                let verdict = judge_cell(v, cell, cell.started());
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
        let view = matrix_view(s, &report.cells);
        if view.is_empty() {
            continue;
        }
        if crate::snapshot::compare_matrix(&root, s, &view)
            != crate::snapshot::SnapshotStatus::Matched
        {
            changed += 1;
        }
    }
    let failed = report.cells.iter().filter(|c| !c.passed).count();
    println!("{}", matrix_table(catalog, &report.cells));
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
        eprintln!("not in this pass: {}", s.trial_name(v));
    }
    if let Err(e) = write(&root, out, report) {
        eprintln!("error: cannot write the sanitizer report: {e}");
        return Exit::Io.into();
    }
    if failed > 0 {
        Exit::TrialFailed.into()
    } else if changed > 0 {
        Exit::SnapshotsDiffer.into()
    } else {
        ExitCode::SUCCESS
    }
}

fn sanitize_one(
    sanitizer: &Path,
    s: &Scenario,
    v: &Variant,
    tool: usize,
    gpu: Option<&Gpu>,
) -> Cell {
    let (tool_name, tool_args) = TOOLS[tool];
    let log = tempfile::Builder::new()
        .prefix("casebook-sanitizer-")
        .suffix(".log")
        .tempfile();
    let log_path = log
        .as_ref()
        .map(|l| l.path().to_path_buf())
        .unwrap_or_default();
    let mut args: Vec<String> = tool_args.iter().map(|a| (*a).to_owned()).collect();
    args.extend([
        "--error-exitcode".into(),
        ERROR_EXIT.to_string(),
        "--print-limit".into(),
        "20".into(),
        "--log-file".into(),
        log_path.display().to_string(),
    ]);
    // The variant's own program, as run-all starts it.
    let inner = crate::trial::command(s, v);
    if let Ok(inner) = &inner {
        args.push(inner.program.display().to_string());
        args.extend(inner.args.iter().cloned());
    }
    // The variant's own environment (a Python variant's PYTHONPATH and
    // names.toml), and the mark that it runs under the tool.
    let mut env = inner.as_ref().map(|i| i.env.clone()).unwrap_or_default();
    env.push((SANITIZER_ENV.to_owned(), "1".to_owned()));
    env.extend(gpu.map(crate::gpus::pin));
    let cmd = ChildCommand {
        program: sanitizer.to_path_buf(),
        args,
        target: s.trial_name(v),
        timeout: time_limit(v),
        env,
    };
    let started = Instant::now();
    // Without the variant's own program there is nothing to put under the tool.
    let run = inner.and_then(|_| isolation::run(&cmd));
    let seconds = started.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let (exit_code, outcome, timed_out) = match &run {
        Ok(run) => (
            run.status.and_then(|s| s.code()),
            Some(isolation::outcome(run)),
            run.timed_out,
        ),
        Err(_) => (None, None, false),
    };
    let flagged = exit_code == Some(ERROR_EXIT);
    let kinds = error_kinds(&text);
    let sites = error_sites(&text);
    let leaked_bytes = leaked(&text);
    let reduced = outcome.as_ref().is_some_and(|o| o.fact(REDUCED).is_some());
    let provokes = outcome
        .as_ref()
        .is_some_and(|o| o.steps.iter().any(|st| st.tolerated && st.is_error()));
    let ran_to_its_end = run.as_ref().ok().map(isolation::ended);
    let mut tail_start = text.len().saturating_sub(4000);
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let mut cell = Cell {
        scenario: s.slug.to_owned(),
        variant: v.name.to_owned(),
        tool: tool_name.to_owned(),
        flagged,
        timed_out,
        kinds,
        sites,
        leaked_bytes,
        reduced,
        provokes,
        ran_to_its_end,
        judgement: String::new(),
        passed: false,
        seconds,
        exit_code,
        log_tail: text[tail_start..].to_owned(),
        first_error: outcome
            .as_ref()
            .and_then(|o| o.first_error())
            .map(|step| format!("{}: {}", step.call, step.result)),
        retried_alone: false,
    };
    cell.set_verdict(&judge_cell(v, &cell, run.is_ok()));
    // It shared the GPU on the strength of a reduced form it did not run.
    if unreduced(v, ran_to_its_end == Some(true), reduced) {
        cell.set_verdict(&CellVerdict::Unreduced);
    }
    cell
}

/// Whether `v` is declared small in its reduced form (and so shares the
/// GPU under the tool) but ran to its end without recording one: a failure.
pub fn unreduced(v: &Variant, ran_to_its_end: bool, reduced: bool) -> bool {
    v.small_when_reduced && ran_to_its_end && !reduced
}

/// The fact a variant records when it runs its reduced form.
pub use casebook_model::REDUCED;

/// What PyTorch's caching allocator leaves for memcheck's leak check: the
/// segments it keeps until the process exits, which memcheck counts as
/// leaked allocations, in every PyTorch program.
const POOL_HELD_AT_EXIT: &str = casebook_report::sanitizer::LEAKED_ALLOCATION;

/// How long `v` may run under one tool.
pub fn time_limit(v: &Variant) -> Duration {
    v.sanitizer_limit.unwrap_or(TIME_LIMIT)
}

/// Whether the variant's declaration accounts for reports of `kind`: it
/// names the kind, and, where it says in which kernels, every printed
/// device-side report of that kind is in one of them.
fn declared(sees: &casebook_model::SanitizerSees, kind: &str, sites: &[String]) -> bool {
    if !sees.kinds.contains(&kind) {
        return false;
    }
    if sees.within.is_empty() {
        return true;
    }
    let prefix = format!("{kind} in ");
    let mut at = sites
        .iter()
        .filter_map(|site| site.strip_prefix(&prefix))
        .peekable();
    at.peek().is_some() && at.all(|kernel| sees.within.iter().any(|w| kernel.starts_with(w)))
}

/// A cell's verdict, from what the tool reported and what the variant
/// declares. `started`: compute-sanitizer started, with the variant's
/// program.
pub fn judge_cell(v: &Variant, cell: &Cell, started: bool) -> CellVerdict {
    let Cell {
        tool,
        flagged,
        timed_out,
        kinds,
        sites,
        provokes,
        ran_to_its_end,
        ..
    } = cell;
    let (tool, flagged, timed_out, provokes, ran_to_its_end) = (
        tool.as_str(),
        *flagged,
        *timed_out,
        *provokes,
        *ran_to_its_end,
    );
    // A report counts as flagged however the tool exited: where the program
    // ends on a signal, its exit code is the signal's, not the error code.
    let ended_badly = kinds.iter().any(|k| k == ENDED_BADLY);
    let reported = kinds.iter().any(|k| k != ENDED_BADLY);
    let flagged = flagged || reported;
    let expects_clean =
        matches!(v.role, Role::Fixed) || (v.role == Role::Contrast && v.expect == Expect::Clean);
    let pool = v.needs_torch() && tool == "memcheck-leaks";
    // The kinds that are the program's, not its libraries'.
    let after_its_end = ran_to_its_end == Some(true);
    let own: Vec<&String> = kinds
        .iter()
        .filter(|k| !(pool && k.as_str() == POOL_HELD_AT_EXIT))
        .filter(|k| {
            !v.sanitizer_sees
                .is_some_and(|sees| declared(&sees, k, sites))
        })
        .filter(|k| !(after_its_end && k.as_str() == ENDED_BADLY))
        .collect();
    let libraries_only = flagged && !kinds.is_empty() && own.is_empty();
    let why = || {
        let mut why = Vec::new();
        if pool && kinds.iter().any(|k| k == POOL_HELD_AT_EXIT) {
            why.push(
                "PyTorch's caching allocator keeps its segments until the process exits, and the \
                 leak check counts them as leaks"
                    .to_owned(),
            );
        }
        // The declaration explains a cell only where what it names was seen.
        if let Some(sees) = v.sanitizer_sees
            && kinds.iter().any(|k| declared(&sees, k, sites))
        {
            why.push(sees.why.to_owned());
        }
        if after_its_end && ended_badly {
            why.push(
                "the process then ended on a signal under the tool, after the variant's end"
                    .to_owned(),
            );
        }
        why.join("; ")
    };
    let limit_seconds = time_limit(v).as_secs();
    match (flagged, expects_clean) {
        _ if !started => CellVerdict::NotStarted,
        // What `Cell::missed` reads back: the tool saw nothing of a bug.
        _ if v.role == Role::Broken && cell.tool_saw_nothing() => CellVerdict::BlindSpot,
        // The process, not the program, outlived the limit.
        (false, _) if timed_out && !reported && ran_to_its_end == Some(true) => {
            CellVerdict::ExitUnchecked { limit_seconds }
        }
        (_, expected_clean) if timed_out => CellVerdict::TimedOut {
            limit_seconds,
            expected_clean,
        },
        (false, _) if ended_badly && after_its_end => CellVerdict::SignalAfterItsEnd,
        (false, expected_clean) if ended_badly => {
            CellVerdict::SignalBeforeItsEnd { expected_clean }
        }
        (false, _) => CellVerdict::Clean,
        (true, _) if libraries_only => CellVerdict::LibrariesOnly { why: why() },
        (true, true) if provokes => CellVerdict::Provoked,
        (true, true) => CellVerdict::FixedFlagged,
        (true, false) => CellVerdict::Caught,
    }
}

/// The hardware-independent matrix of one scenario: variant → tool → what.
/// The API errors that only echo a kernel fault the tool already reported.
const LAUNCH_FAILURE_ECHOES: &[&str] = &[
    "API error CUDA_ERROR_LAUNCH_FAILED",
    "API error cudaErrorLaunchFailure",
];

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

fn matrix_table(catalog: &[Scenario], cells: &[Cell]) -> String {
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    let mut header = vec!["scenario::variant".to_owned()];
    header.extend(TOOLS.iter().map(|(t, _)| (*t).to_owned()));
    table.set_header(header);
    let role = |c: &Cell| {
        catalog
            .iter()
            .find(|s| s.slug == c.scenario)
            .and_then(|s| s.variant(&c.variant))
            .map(|v| v.role)
    };
    let mut rows: Vec<(TrialId, Vec<String>)> = Vec::new();
    for c in cells {
        let key = c.trial();
        if rows.last().is_none_or(|(k, _)| *k != key) {
            rows.push((key.clone(), vec![String::new(); TOOLS.len()]));
        }
        let t = TOOLS.iter().position(|(t, _)| *t == c.tool).unwrap_or(0);
        let mark = match (c.flagged, c.passed) {
            (_, false) => "FAIL",
            _ if c.timed_out => "timed out",
            (true, _) => "flagged",
            (false, _) if role(c).is_some_and(|r| c.missed(r)) => "missed",
            _ => "clean",
        };
        rows.last_mut().expect("pushed").1[t] = mark.to_owned();
    }
    for (key, marks) in rows {
        let mut row = vec![key.to_string()];
        row.extend(marks);
        table.add_row(row);
    }
    table.to_string()
}

fn write(root: &Path, out: &Path, report: &SanitizeReport) -> std::io::Result<()> {
    std::fs::create_dir_all(out)?;
    std::fs::write(
        out.join("sanitize.json"),
        serde_json::to_string_pretty(report)? + "\n",
    )?;
    crate::run_all::pack_snapshots(root, out)?;
    eprintln!("report: {}", out.join("sanitize.json").display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pytorch_fixed() -> Variant {
        Variant::fixed(
            "fixed-py",
            casebook_model::Program::pytorch("python/x.py", "fixed"),
        )
    }

    /// A cell of `tool` that ran to the variant's end and reported `kinds`
    /// (flagged if any), with nothing else set.
    fn cell(tool: &str, kinds: &[&str]) -> Cell {
        Cell {
            scenario: "s".to_owned(),
            variant: "v".to_owned(),
            tool: tool.to_owned(),
            flagged: !kinds.is_empty(),
            timed_out: false,
            kinds: kinds.iter().map(|k| (*k).to_owned()).collect(),
            sites: Vec::new(),
            leaked_bytes: None,
            reduced: false,
            provokes: false,
            ran_to_its_end: Some(true),
            judgement: String::new(),
            passed: false,
            seconds: 1.0,
            exit_code: None,
            log_tail: String::new(),
            first_error: None,
            retried_alone: false,
        }
    }

    fn judged(v: &Variant, tool: &str, kinds: &[&str]) -> (String, bool) {
        words(judge_cell(v, &cell(tool, kinds), true))
    }

    /// A verdict as a cell records it.
    fn words(verdict: CellVerdict) -> (String, bool) {
        (verdict.to_string(), verdict.passed())
    }

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

    /// A scenario `s` with `variants` and nothing else.
    fn scenario(
        requires: &'static [casebook_model::Requirement],
        variants: Vec<Variant>,
    ) -> Scenario {
        Scenario {
            slug: "s",
            title: "",
            cause: "",
            fix: "",
            symptoms: &[],
            requires,
            reports: &[],
            claims: &[],
            variants,
        }
    }

    /// A Rust program that does nothing.
    fn program() -> casebook_model::Program {
        fn nothing(_: &mut casebook_model::Recorder) -> anyhow::Result<()> {
            Ok(())
        }
        casebook_model::Program::host(nothing as casebook_model::VariantFn)
    }

    #[test]
    fn only_a_clean_variant_s_timeout_beside_others_runs_again_alone() {
        use casebook_model::{Requirement, Symptom};
        let fixed = || Variant::fixed("v", program());
        let broken = Variant::broken("b", Symptom::cuda_error("E"), program());
        let timed_out = |v: &Variant| {
            let mut c = cell("racecheck", &[]);
            (c.timed_out, c.ran_to_its_end) = (true, Some(false));
            c.set_verdict(&judge_cell(v, &c, true));
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
        let (judgement, passed) = judged(f, "racecheck", &["Race reported"]);
        let flagged = Cell {
            judgement,
            passed,
            ..cell("racecheck", &["Race reported"])
        };
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
            c.set_verdict(&judge_cell(v, &c, true));
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

    #[test]
    fn a_variant_that_shares_on_the_strength_of_a_reduced_form_must_run_it() {
        let small = pytorch_fixed().small_when_reduced();
        assert!(unreduced(&small, true, false));
        assert!(!CellVerdict::Unreduced.passed());
        assert!(!unreduced(&small, true, true));
        // A run cut short says nothing about its form.
        assert!(!unreduced(&small, false, false));
        assert!(!unreduced(&pytorch_fixed(), true, false));
    }

    #[test]
    fn the_pool_held_at_exit_is_no_leak_of_a_pytorch_program() {
        let v = pytorch_fixed();
        let (why, passed) = judged(&v, "memcheck-leaks", &["leaked allocation"]);
        assert!(passed, "{why}");
        assert!(why.contains("caching allocator"), "{why}");
        // Only under the leak check, and only that kind.
        assert!(!judged(&v, "memcheck-stream-races", &["leaked allocation"]).1);
        assert!(
            !judged(
                &v,
                "memcheck-leaks",
                &["leaked allocation", "Invalid __global__ read"]
            )
            .1
        );
        // A Rust variant's leak stays a leak.
        let rust = Variant::fixed("fixed", casebook_model::Program::host(|_| Ok(())));
        assert!(!judged(&rust, "memcheck-leaks", &["leaked allocation"]).1);
    }

    #[test]
    fn declared_library_reports_pass_and_nothing_else_does() {
        let v = pytorch_fixed().sanitizer_sees(
            &["API error CUDA_ERROR_OUT_OF_MEMORY"],
            "the allocator is refused pages and retries",
        );
        let (why, passed) = judged(
            &v,
            "memcheck-stream-races",
            &["API error CUDA_ERROR_OUT_OF_MEMORY"],
        );
        assert!(passed && why.contains("refused pages"), "{why}");
        let (why, passed) = judged(
            &v,
            "memcheck-stream-races",
            &[
                "API error CUDA_ERROR_OUT_OF_MEMORY",
                "API error CUDA_ERROR_INVALID_VALUE",
            ],
        );
        assert!(!passed, "{why}");
        assert_eq!(judged(&v, "racecheck", &[]), ("clean".to_owned(), true));
    }

    /// Where the two initcheck reports of PyTorch's cuDNN convolutions are
    /// (see `casebook_report::sanitizer`'s test of `error_sites`).
    fn cudnn_sites() -> Vec<String> {
        [
            "cudnn::cnn::wgrad2d_grouped_direct_kernel",
            "cudnn::engines_precompiled::nhwcToNchwKernel",
        ]
        .iter()
        .map(|kernel| format!("Uninitialized __global__ memory read of size bytes in {kernel}"))
        .collect()
    }

    #[test]
    fn reports_declared_within_a_library_pass_only_in_its_kernels() {
        const UNINIT: &str = "Uninitialized __global__ memory read of size bytes";
        let v = pytorch_fixed().sanitizer_sees_within(
            &[UNINIT],
            &["cudnn::"],
            "cuDNN's kernels read what its engine did not write",
        );
        let judge = |sites: &[String]| {
            let mut c = cell("initcheck", &[UNINIT]);
            c.sites = sites.to_vec();
            words(judge_cell(&v, &c, true))
        };
        let (why, passed) = judge(&cudnn_sites());
        assert!(passed && why.contains("cuDNN"), "{why}");
        // One in the program's own kernel, or none printed: the program's.
        let own = format!("{UNINIT} in my_kernel");
        let mut sites = cudnn_sites();
        sites.push(own);
        assert!(!judge(&sites).1);
        assert!(!judge(&[]).1);
        // A signal after the variant's end is not the program's report.
        let mut c = cell("initcheck", &[UNINIT, ENDED_BADLY]);
        c.sites = cudnn_sites();
        let (why, passed) = words(judge_cell(&v, &c, true));
        assert!(passed && why.contains("after the variant's end"), "{why}");
        c.ran_to_its_end = Some(false);
        assert!(!judge_cell(&v, &c, true).passed());
    }

    #[test]
    fn a_process_that_ends_on_a_signal_under_the_tool_is_not_called_clean() {
        for v in [
            pytorch_fixed(),
            Variant::broken(
                "broken-py",
                casebook_model::Symptom::cuda_error("torch.OutOfMemoryError"),
                casebook_model::Program::pytorch("python/x.py", "broken"),
            ),
        ] {
            let judge = |ended| {
                let mut c = cell("memcheck-leaks", &[ENDED_BADLY]);
                // compute-sanitizer's exit code is then the signal's, not its own.
                c.flagged = false;
                c.ran_to_its_end = ended;
                words(judge_cell(&v, &c, true))
            };
            let (why, passed) = judge(Some(true));
            assert!(passed && why.contains("went unchecked"), "{why}");
            // A report beside the signal is a report, whatever the exit code.
            let mut c = cell(
                "memcheck-leaks",
                &[ENDED_BADLY, "Invalid __global__ read of size bytes"],
            );
            c.flagged = false;
            let (why, passed) = words(judge_cell(&v, &c, true));
            assert!(!why.contains("no report"), "{why}");
            assert_eq!(passed, v.role != casebook_model::Role::Fixed, "{why}");
            // Killed before its end: a fixed variant fails, however recorded.
            for ended in [Some(false), None] {
                let (why, passed) = judge(ended);
                assert!(why.contains("only part"), "{why}");
                assert_eq!(passed, v.role != casebook_model::Role::Fixed, "{why}");
            }
        }
    }

    #[test]
    fn a_variant_may_have_its_own_time_limit() {
        let slow = pytorch_fixed().sanitizer_time_limit(Duration::from_secs(200));
        assert_eq!(time_limit(&slow), Duration::from_secs(200));
        assert_eq!(time_limit(&pytorch_fixed()), TIME_LIMIT);
        let mut timed_out = cell("racecheck", &[]);
        timed_out.timed_out = true;
        timed_out.ran_to_its_end = Some(false);
        let (why, passed) = words(judge_cell(&slow, &timed_out, true));
        assert!(!passed && why.contains("200 s"), "{why}");
        // Its process outlived the limit after the variant's end.
        timed_out.ran_to_its_end = Some(true);
        let (why, passed) = words(judge_cell(&slow, &timed_out, true));
        assert!(passed && why.contains("did not exit within 200 s"), "{why}");
        // Unless the tool had reported something by then.
        timed_out.kinds = vec!["Invalid __global__ read of size bytes".to_owned()];
        assert!(!judge_cell(&slow, &timed_out, true).passed());
    }
}
