//! The detection matrix (`sanitize.json`): every variant under each of
//! compute-sanitizer's five configurations, one cell each, with what the
//! tool reported (read from its log) and what that amounts to.

use std::collections::BTreeSet;

use casebook_model::{Role, TrialId};
use serde::{Deserialize, Serialize};

use crate::machine::Environment;

/// Where the report of the newest full sanitizer pass is committed.
pub const SANITIZE_JSON: &str = "docs/evidence/sanitize.json";

/// The five configurations: a cell's `tool`, and its arguments.
pub const TOOLS: &[(&str, &[&str])] = &[
    (
        "memcheck-leaks",
        &["--tool", "memcheck", "--leak-check", "full"],
    ),
    (
        "memcheck-stream-races",
        &["--tool", "memcheck", "--track-stream-ordered-races", "all"],
    ),
    ("racecheck", &["--tool", "racecheck"]),
    ("synccheck", &["--tool", "synccheck"]),
    ("initcheck", &["--tool", "initcheck"]),
];

/// The names of [`TOOLS`], in order.
pub fn tool_names() -> impl Iterator<Item = &'static str> {
    TOOLS.iter().map(|(name, _)| *name)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    pub scenario: String,
    pub variant: String,
    pub tool: String,
    pub flagged: bool,
    /// The tool did not finish within its time limit and was killed.
    pub timed_out: bool,
    /// The kinds of error reported, with numbers and addresses taken out.
    pub kinds: Vec<String>,
    /// Where the device-side reports among them were: `kind in kernel`.
    #[serde(default)]
    pub sites: Vec<String>,
    pub leaked_bytes: Option<u64>,
    /// The variant ran in its reduced form.
    pub reduced: bool,
    /// The variant's own outcome shows errors it provokes on purpose.
    pub provokes: bool,
    /// The variant recorded its end (returned or panicked) under the tool;
    /// `None` in cells recorded before this was.
    #[serde(default)]
    pub ran_to_its_end: Option<bool>,
    /// The judge's verdict on this cell ([`CellVerdict`]), in its words.
    pub judgement: String,
    /// Whether that verdict lets the pass succeed ([`CellVerdict::passed`]).
    pub passed: bool,
    pub seconds: f64,
    pub exit_code: Option<i32>,
    pub log_tail: String,
    /// The variant's own first failed call under the tool, that it does not
    /// provoke on purpose: `call: result`. The tool's reports are what a
    /// cell is judged by; this says whether the variant got as far as the
    /// code the cell is about.
    #[serde(default)]
    pub first_error: Option<String>,
    /// Its first run, beside other cells, was spoiled by them, and this is
    /// its run alone (see the retry policy of `casebook sanitize`).
    #[serde(default)]
    pub retried_alone: bool,
}

impl Cell {
    /// The trial this cell ran.
    pub fn trial(&self) -> TrialId {
        TrialId::new(&self.scenario, &self.variant)
    }

    /// Whether compute-sanitizer started, with the variant's program: then
    /// it exited with a code, or was killed at its time limit, and the
    /// variant's events were read (`ran_to_its_end` is set).
    pub fn started(&self) -> bool {
        self.exit_code.is_some() || self.timed_out || self.ran_to_its_end.is_some()
    }

    /// Whether the tool said nothing at all: no report, no signal, no
    /// timeout. For a broken variant that is a blind spot.
    pub fn tool_saw_nothing(&self) -> bool {
        !self.timed_out && !self.flagged && self.kinds.is_empty()
    }

    /// Whether this is a blind spot of its tool, for a variant of `role`:
    /// a broken variant's cell that passed and in which the tool saw
    /// nothing ([`CellVerdict::BlindSpot`]).
    pub fn missed(&self, role: Role) -> bool {
        role == Role::Broken && self.passed && self.tool_saw_nothing()
    }

    /// Records `verdict` as this cell's judgement.
    pub fn set_verdict(&mut self, verdict: &CellVerdict) {
        self.judgement = verdict.to_string();
        self.passed = verdict.passed();
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SanitizeReport {
    pub created: String,
    pub environment: Environment,
    pub sanitizer: String,
    pub wall_seconds: f64,
    pub cells: Vec<Cell>,
}

/// What a cell amounts to, from what the tool reported and what the
/// variant declares. The runner's judge decides it; a cell records it in
/// words (`judgement`) with whether it passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellVerdict {
    /// compute-sanitizer did not start, with the variant's program.
    NotStarted,
    /// No report while the variant ran; it ran to its end, then its
    /// process outlived the limit, so what the tool checks at exit went
    /// unchecked.
    ExitUnchecked {
        limit_seconds: u64,
    },
    /// The tool did not finish within the limit: a failure where the
    /// variant is expected clean.
    TimedOut {
        limit_seconds: u64,
        expected_clean: bool,
    },
    /// No report, but the process ended on a signal after the variant's end.
    SignalAfterItsEnd,
    /// The process ended on a signal before the variant's end: the tool saw
    /// only part of it, a failure where the variant is expected clean.
    SignalBeforeItsEnd {
        expected_clean: bool,
    },
    Clean,
    /// Every report is of what the variant's libraries do and handle.
    LibrariesOnly {
        why: String,
    },
    /// A clean variant flagged for what it provokes on purpose.
    Provoked,
    FixedFlagged,
    Caught,
    /// A broken variant the tool does not catch.
    BlindSpot,
    /// Declared small in its reduced form (and so run beside others), it
    /// ran to its end without recording one.
    Unreduced,
}

impl CellVerdict {
    /// Whether the pass succeeds with this cell.
    pub fn passed(&self) -> bool {
        match self {
            CellVerdict::NotStarted | CellVerdict::FixedFlagged | CellVerdict::Unreduced => false,
            CellVerdict::TimedOut { expected_clean, .. }
            | CellVerdict::SignalBeforeItsEnd { expected_clean } => !expected_clean,
            CellVerdict::ExitUnchecked { .. }
            | CellVerdict::SignalAfterItsEnd
            | CellVerdict::Clean
            | CellVerdict::LibrariesOnly { .. }
            | CellVerdict::Provoked
            | CellVerdict::Caught
            | CellVerdict::BlindSpot => true,
        }
    }
}

impl std::fmt::Display for CellVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fail = |expected_clean: bool| if expected_clean { "FAIL: " } else { "" };
        match self {
            CellVerdict::NotStarted => f.write_str("FAIL: compute-sanitizer did not start"),
            CellVerdict::ExitUnchecked { limit_seconds } => write!(
                f,
                "no report while the variant ran; it ran to its end, then its process did not \
                 exit within {limit_seconds} s under the tool, so what the tool checks at exit \
                 went unchecked"
            ),
            CellVerdict::TimedOut {
                limit_seconds,
                expected_clean,
            } => write!(
                f,
                "{}timed out after {limit_seconds} s under the tool",
                fail(*expected_clean)
            ),
            CellVerdict::SignalAfterItsEnd => f.write_str(
                "no report, but the process ended on a signal after the variant's end, so what \
                 the tool checks at exit went unchecked",
            ),
            CellVerdict::SignalBeforeItsEnd { expected_clean } => write!(
                f,
                "{}the process ended on a signal under the tool before the variant's end: the \
                 tool saw only part of it",
                fail(*expected_clean)
            ),
            CellVerdict::Clean => f.write_str("clean"),
            CellVerdict::LibrariesOnly { why } => {
                write!(f, "flags only what its libraries do and handle: {why}")
            }
            CellVerdict::Provoked => f.write_str("flags what the variant provokes on purpose"),
            CellVerdict::FixedFlagged => f.write_str("FAIL: a fixed variant is flagged"),
            CellVerdict::Caught => f.write_str("caught"),
            CellVerdict::BlindSpot => f.write_str("blind spot: not caught"),
            CellVerdict::Unreduced => f.write_str(
                "FAIL: declared small in its reduced form, and so run beside others, but it did \
                 not record running one",
            ),
        }
    }
}

/// What compute-sanitizer says when the program it watches ends on a
/// signal: what the tool checks at the program's exit (the leak check) is
/// then not done.
pub const ENDED_BADLY: &str = "Error: process didn't terminate successfully";

/// What memcheck's leak check calls each allocation left at exit.
pub const LEAKED_ALLOCATION: &str = "leaked allocation";

/// The prefix of the kind of an error a CUDA API call returned.
pub const API_ERROR: &str = "API error ";

/// The distinct kinds of error in a compute-sanitizer log: the first line
/// of each report, with sizes, counts and addresses taken out.
pub fn error_kinds(log: &str) -> Vec<String> {
    let mut kinds = BTreeSet::new();
    for line in log.lines() {
        let Some(rest) = line.strip_prefix("========= ") else {
            continue;
        };
        if let Some(kind) = report_kind(rest) {
            kinds.insert(kind);
        }
    }
    kinds.into_iter().collect()
}

/// The kind of the report whose first line (after `========= `) is
/// `rest`, or `None` when it is no report's first line.
fn report_kind(rest: &str) -> Option<String> {
    if rest.starts_with(' ')
        || rest.starts_with("ERROR SUMMARY")
        || rest.starts_with("LEAK SUMMARY")
        || rest.starts_with("COMPUTE-SANITIZER")
        || rest.starts_with("RACECHECK SUMMARY")
        || rest.starts_with("Target application")
        || rest.trim().is_empty()
    {
        return None;
    }
    let kind = if let Some(api) = rest.strip_prefix("Program hit ") {
        format!("{API_ERROR}{}", api.split_whitespace().next().unwrap_or(""))
    } else if rest.starts_with("Leaked ") {
        LEAKED_ALLOCATION.to_owned()
    } else {
        rest.split(" at ")
            .next()
            .unwrap_or(rest)
            .split_whitespace()
            .filter(|w| {
                !w.starts_with("0x") && !w.chars().next().is_some_and(|c| c.is_ascii_digit())
            })
            .collect::<Vec<_>>()
            .join(" ")
            .trim_end_matches([':', '.'])
            .to_owned()
    };
    (!kind.is_empty()).then_some(kind)
}

/// Where each device-side report in a compute-sanitizer log was, as
/// `kind in kernel`: the kernel named on the report's `at` line, without
/// its return type, template arguments and parameters
/// (`cudnn::engines_precompiled::nhwcToNchwKernel`). Distinct, sorted.
pub fn error_sites(log: &str) -> Vec<String> {
    let mut sites = BTreeSet::new();
    let mut kind = None;
    for rest in log.lines().filter_map(|l| l.strip_prefix("========= ")) {
        if let Some(at) = rest.trim_start().strip_prefix("at ")
            && rest.starts_with(' ')
            && let Some(kind) = kind.take()
        {
            // `at 0x150 in void f<…>(…)` or `at void f<…>(…)+0x1720`.
            let function = match at.split_once(" in ") {
                Some((offset, function)) if offset.starts_with("0x") => function,
                _ => at,
            };
            let name = function
                .split(['<', '('])
                .next()
                .unwrap_or("")
                .split_whitespace()
                .last()
                .unwrap_or("");
            if !name.is_empty() {
                sites.insert(format!("{kind} in {name}"));
            }
            continue;
        }
        if !rest.starts_with(' ') {
            kind = report_kind(rest);
        }
    }
    sites.into_iter().collect()
}

/// The leaked bytes of a `LEAK SUMMARY: N bytes leaked in M allocations` line.
pub fn leaked(log: &str) -> Option<u64> {
    log.lines()
        .find_map(|l| l.split("LEAK SUMMARY: ").nth(1))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.replace(',', "").parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at spin_then_fault(unsigned long long)+0x70
=========     by thread (0,0,0) in block (0,0,0)
=========     Address 0x0 is out of bounds
========= Program hit CUDA_ERROR_ILLEGAL_ADDRESS (error 700) due to \"an illegal memory access was encountered\" on CUDA API call to cuCtxSynchronize.
========= Leaked 1,073,741,824 bytes at 0x7f0000000000
========= LEAK SUMMARY: 4,294,967,296 bytes leaked in 4 allocations
========= ERROR SUMMARY: 6 errors
";

    /// Two initcheck reports as PyTorch's cuDNN convolutions give them, and
    /// one in a kernel of the program's own.
    pub(crate) const INITCHECK_LOG: &str = "\
========= COMPUTE-SANITIZER
========= Uninitialized __global__ memory read of size 4 bytes
=========     at void cudnn::engines_precompiled::nhwcToNchwKernel<float, float, float, (bool)1, (bool)0, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nhwc2nchw_params_t<T3>, const T1 *, T2 *)+0x1720
=========     by thread (76,0,0) in block (0,0,22)
=========     Address 0x7fbd12406430
========= 
========= Uninitialized __global__ memory read of size 4 bytes
=========     at 0x150 in void cudnn::cnn::wgrad2d_grouped_direct_kernel<float>(float const *)
=========     by thread (77,0,0) in block (0,0,22)
========= 
========= Program hit CUDA_ERROR_OUT_OF_MEMORY (error 2) due to \"out of memory\" on CUDA API call to cuMemCreate.
=========     Saved host backtrace up to driver entry point at error
========= 
========= ERROR SUMMARY: 3 errors
";

    #[test]
    fn sites_name_the_kernel_of_each_device_side_report() {
        assert_eq!(
            error_sites(INITCHECK_LOG),
            vec![
                "Uninitialized __global__ memory read of size bytes in \
                 cudnn::cnn::wgrad2d_grouped_direct_kernel",
                "Uninitialized __global__ memory read of size bytes in \
                 cudnn::engines_precompiled::nhwcToNchwKernel",
            ]
        );
        assert_eq!(
            error_sites(LOG),
            vec!["Invalid __global__ write of size bytes in spin_then_fault"]
        );
    }

    #[test]
    fn kinds_and_leaks_are_read_from_the_log() {
        assert_eq!(
            error_kinds(LOG),
            vec![
                "API error CUDA_ERROR_ILLEGAL_ADDRESS",
                "Invalid __global__ write of size bytes",
                "leaked allocation"
            ]
        );
        assert_eq!(leaked(LOG), Some(4_294_967_296));
        assert_eq!(leaked("nothing"), None);
    }

    #[test]
    fn every_verdict_reads_as_it_always_has() {
        let words = [
            (
                CellVerdict::NotStarted,
                "FAIL: compute-sanitizer did not start",
            ),
            (
                CellVerdict::TimedOut {
                    limit_seconds: 90,
                    expected_clean: true,
                },
                "FAIL: timed out after 90 s under the tool",
            ),
            (
                CellVerdict::TimedOut {
                    limit_seconds: 90,
                    expected_clean: false,
                },
                "timed out after 90 s under the tool",
            ),
            (CellVerdict::BlindSpot, "blind spot: not caught"),
            (CellVerdict::Caught, "caught"),
            (CellVerdict::Clean, "clean"),
        ];
        for (verdict, text) in words {
            assert_eq!(verdict.to_string(), text);
        }
    }
}
