//! A sanitizer cell's verdict: what compute-sanitizer reported for one
//! variant under one tool, held to what the variant declares.
//!
//! A tool flags a variant when compute-sanitizer exits with the error exit
//! code given to it, or reports anything. A fixed variant must be clean
//! under every tool, except for the errors it provokes on purpose (its own
//! outcome shows them) and what its libraries do and handle (declared with
//! `sanitizer_sees`); a broken variant that a tool misses is a blind spot,
//! and the matrix records it as such.

use std::time::Duration;

use casebook_model::{Expect, Role, Variant};
use casebook_report::sanitizer::{Cell, CellVerdict, ENDED_BADLY};

/// How long one variant may run under one tool, unless it says otherwise.
pub const TIME_LIMIT: Duration = Duration::from_secs(90);

/// How long `v` may run under one tool.
pub fn time_limit(v: &Variant) -> Duration {
    v.sanitizer_limit.unwrap_or(TIME_LIMIT)
}

/// Whether `v` is declared small in its reduced form (and so shares the
/// GPU under the tool) but ran to its end without recording one: a failure.
pub fn unreduced(v: &Variant, ran_to_its_end: bool, reduced: bool) -> bool {
    v.small_when_reduced && ran_to_its_end && !reduced
}

/// What PyTorch's caching allocator leaves for memcheck's leak check: the
/// segments it keeps until the process exits, which memcheck counts as
/// leaked allocations, in every PyTorch program.
const POOL_HELD_AT_EXIT: &str = casebook_report::sanitizer::LEAKED_ALLOCATION;

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
pub fn judge(v: &Variant, cell: &Cell, started: bool) -> CellVerdict {
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

#[cfg(test)]
pub(crate) mod tests {
    use casebook_model::Scenario;
    use casebook_report::sanitizer::Cell;

    use super::*;

    pub(crate) fn pytorch_fixed() -> Variant {
        Variant::fixed(
            "fixed-py",
            casebook_model::Program::pytorch("python/x.py", "fixed"),
        )
    }

    /// A cell of `tool` that ran to the variant's end and reported `kinds`
    /// (flagged if any), with nothing else set.
    pub(crate) fn cell(tool: &str, kinds: &[&str]) -> Cell {
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
        words(judge(v, &cell(tool, kinds), true))
    }

    /// A verdict as a cell records it.
    fn words(verdict: CellVerdict) -> (String, bool) {
        (verdict.to_string(), verdict.passed())
    }

    /// A scenario `s` with `variants` and nothing else.
    pub(crate) fn scenario(
        requires: &'static [casebook_model::Requirement],
        variants: Vec<Variant>,
    ) -> Scenario {
        Scenario::test_only("s", requires, variants)
    }

    /// A Rust program that does nothing.
    pub(crate) fn program() -> casebook_model::Program {
        fn nothing(_: &mut casebook_model::Recorder) -> anyhow::Result<()> {
            Ok(())
        }
        casebook_model::Program::host(nothing as casebook_model::VariantFn)
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
            words(super::judge(&v, &c, true))
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
        let (why, passed) = words(super::judge(&v, &c, true));
        assert!(passed && why.contains("after the variant's end"), "{why}");
        c.ran_to_its_end = Some(false);
        assert!(!super::judge(&v, &c, true).passed());
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
                words(super::judge(&v, &c, true))
            };
            let (why, passed) = judge(Some(true));
            assert!(passed && why.contains("went unchecked"), "{why}");
            // A report beside the signal is a report, whatever the exit code.
            let mut c = cell(
                "memcheck-leaks",
                &[ENDED_BADLY, "Invalid __global__ read of size bytes"],
            );
            c.flagged = false;
            let (why, passed) = words(super::judge(&v, &c, true));
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

    /// The cookbook and the tables read a blind spot back from the record
    /// (`Cell::missed`) without the judge: over every shape of cell, they
    /// find exactly the cells this judge calls one.
    #[test]
    fn a_recorded_blind_spot_is_what_the_judge_calls_one() {
        use casebook_model::Symptom;
        let broken = Variant::broken("b", Symptom::cuda_error("E"), program());
        let fixed = Variant::fixed("f", program());
        let mut seen = 0;
        for v in [&broken, &fixed, &pytorch_fixed()] {
            for kinds in [&[][..], &["Race reported"], &[ENDED_BADLY]] {
                for (flagged, timed_out, ended) in [
                    (false, false, Some(true)),
                    (true, false, Some(true)),
                    (false, true, Some(false)),
                    (false, true, Some(true)),
                    (false, false, None),
                ] {
                    for started in [true, false] {
                        let mut c = cell("racecheck", kinds);
                        (c.flagged, c.timed_out, c.ran_to_its_end) = (flagged, timed_out, ended);
                        let verdict = super::judge(v, &c, started);
                        c.set_verdict(&verdict);
                        let blind = verdict == CellVerdict::BlindSpot;
                        seen += usize::from(blind);
                        assert_eq!(c.missed(v.role), blind, "{c:?}");
                    }
                }
            }
        }
        assert!(seen > 0);
    }

    #[test]
    fn a_variant_may_have_its_own_time_limit() {
        let slow = pytorch_fixed().sanitizer_time_limit(Duration::from_secs(200));
        assert_eq!(time_limit(&slow), Duration::from_secs(200));
        assert_eq!(time_limit(&pytorch_fixed()), TIME_LIMIT);
        let mut timed_out = cell("racecheck", &[]);
        timed_out.timed_out = true;
        timed_out.ran_to_its_end = Some(false);
        let (why, passed) = words(judge(&slow, &timed_out, true));
        assert!(!passed && why.contains("200 s"), "{why}");
        // Its process outlived the limit after the variant's end.
        timed_out.ran_to_its_end = Some(true);
        let (why, passed) = words(judge(&slow, &timed_out, true));
        assert!(passed && why.contains("did not exit within 200 s"), "{why}");
        // Unless the tool had reported something by then.
        timed_out.kinds = vec!["Invalid __global__ read of size bytes".to_owned()];
        assert!(!judge(&slow, &timed_out, true).passed());
    }
}
