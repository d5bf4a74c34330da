//! What a run shows as it goes, on stderr: the line that opens it, a line
//! for each trial or cell as it ends, and what a person needs to see when
//! a trial fails.

use std::fmt::Write as _;

use casebook_report::sanitizer::Cell;
use casebook_report::{Environment, SnapshotStatus, Verdict};

use crate::gpus::Gpu;
use crate::judge::observed_text;
use crate::runner::dispatch::Trial;
use crate::runner::executor::TrialRecord;
use crate::runner::scheduler::Progress;

/// `[12/64] 3 running, 34.2 s`: `done` trials of the run's, how many are
/// running, and the time so far.
pub fn line(done: usize, progress: &Progress) -> String {
    format!(
        "[{:>2}/{}] {} running, {:.1} s",
        done,
        progress.total,
        progress.running.len(),
        progress.started.elapsed().as_secs_f64()
    )
}

/// The line that opens a run: the machine, how many trials, how many side
/// by side, and over which GPUs.
pub fn header(environment: &Environment, trials: usize, jobs: usize, gpus: &[Gpu]) -> String {
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
    format!(
        "{} on driver {} (CUDA {}), kernels from toolkit {}: {trials} trials, {jobs} side by side{on}",
        environment.gpu, environment.driver, environment.cuda, environment.toolkit,
    )
}

/// A finished trial: where the run is, the trial, its verdict, its time,
/// what it showed, what became of its snapshot, and its GPU where there
/// are several; then, for a failure, its details.
pub fn trial(
    at: &str,
    trial: Trial,
    record: &TrialRecord,
    snapshot: SnapshotStatus,
    several_gpus: bool,
) -> String {
    let snap = match snapshot {
        SnapshotStatus::Matched => "",
        SnapshotStatus::New => "  [new snapshot]",
        SnapshotStatus::Changed => "  [snapshot changed]",
    };
    let on = match record.gpus.as_slice() {
        _ if !several_gpus => String::new(),
        [] => String::new(),
        [one] => format!("  [GPU {one}]"),
        pair => {
            let pair: Vec<String> = pair.iter().map(u32::to_string).collect();
            format!("  [GPUs {}]", pair.join("+"))
        }
    };
    let mut line = format!(
        "{at} {:<44} {} {:>6.2} s  {}{snap}{on}",
        trial.name(),
        record.judgement.verdict.shown(),
        record.outcome.seconds,
        observed_text(&record.judgement)
    );
    if record.judgement.verdict == Verdict::Fail {
        line.push_str("\n        ");
        line.push_str(&failure_details(record).replace('\n', "\n        "));
    }
    line
}

/// What a person needs to see when a trial fails: why, the first failed
/// call, the error, and the end of what the child printed.
pub fn failure_details(record: &TrialRecord) -> String {
    let mut text = record.judgement.reason.clone().unwrap_or_default();
    let o = &record.outcome;
    let _ = write!(text, "\n  termination: {}", o.termination);
    if let Some(step) = o.first_error() {
        let _ = write!(
            text,
            "\n  first failed call: {} -> {}",
            step.call, step.result
        );
    }
    if let Some(error) = &o.error {
        let _ = write!(text, "\n  error: {error}");
    }
    if !o.stderr_tail.is_empty() {
        let last: Vec<&str> = o.stderr_tail.lines().rev().take(15).collect();
        let _ = write!(text, "\n  output (last lines):");
        for line in last.into_iter().rev() {
            let _ = write!(text, "\n    {line}");
        }
    }
    text
}

/// A cell's progress line: `[at] trial tool clean|flagged seconds judgement`.
pub fn cell(at: &str, cell: &Cell) -> String {
    format!(
        "[{at}] {:<40} {:<22} {:<10} {:>6.1} s  {}",
        cell.trial(),
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
