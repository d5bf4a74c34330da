//! The binding comparison page: what cudarc and cust do with the same
//! failures. Each statement names the variant that shows it, and whether the
//! latest GPU run did show it is computed from that variant's outcome.

use std::fmt::Write as _;

use casebook_harness::judge::Verdict;
use casebook_harness::report::{Report, ResultEntry};
use casebook_model::{Binding, Outcome, Scenario};

/// A statement about a binding, and the trial whose outcome decides it.
struct Statement {
    failure: &'static str,
    binding: Binding,
    says: &'static str,
    variant: &'static str,
    /// From the variant's outcome: does the statement hold?
    holds: fn(&Outcome) -> Option<bool>,
    /// The measured figure or fact shown beside it.
    evidence: fn(&Outcome) -> String,
}

fn check(o: &Outcome, name: &str) -> Option<bool> {
    o.check(name)
}

fn measure(o: &Outcome, key: &str, unit: &str) -> String {
    o.measure(key)
        .map(|v| match v.fract() == 0.0 {
            true => format!("{key} = {v}{unit}"),
            false => format!("{key} = {v:.2}{unit}"),
        })
        .unwrap_or_else(|| format!("{key}: not recorded"))
}

fn yes_no(what: &str, value: Option<bool>) -> String {
    let word = match value {
        Some(true) => "yes",
        Some(false) => "no",
        None => "not recorded",
    };
    format!("{what}: {word}")
}

fn first_error(o: &Outcome) -> String {
    o.first_error()
        .map(|s| format!("{} → {}", s.call, s.result))
        .unwrap_or_else(|| "no call failed".to_owned())
}

const FREED: &str = "free memory returns to its baseline";
const FRESH: &str = "host reads the finished result";
const OVERLAP: &str = "the two streams' kernels run at the same time";
const READER: &str = "reader sees the values it was given";

const STATEMENTS: &[Statement] = &[
    Statement {
        failure: "missing-free",
        binding: Binding::Cudarc,
        says: "A raw cuMemAlloc that is never freed leaks until cuMemAlloc fails.",
        variant: "broken",
        holds: |o| Some(o.first_error()?.result == "CUDA_ERROR_OUT_OF_MEMORY"),
        evidence: first_error,
    },
    Statement {
        failure: "missing-free",
        binding: Binding::Cust,
        says: "A DeviceBuffer that goes out of scope is freed by its Drop: the missing free cannot be written.",
        variant: "fixed-cust",
        holds: |o| check(o, FREED),
        evidence: |o| measure(o, "calls_completed", " calls"),
    },
    Statement {
        failure: "missing-free",
        binding: Binding::Cust,
        says: "A DeviceBuffer kept beyond its call (a cache that nothing evicts) leaks exactly as much.",
        variant: "broken-cust",
        holds: |o| Some(o.first_error()?.result == "CUDA_ERROR_OUT_OF_MEMORY"),
        evidence: first_error,
    },
    Statement {
        failure: "missing-free",
        binding: Binding::Cust,
        says: "After a kernel fault, cuMemFree fails; DeviceBuffer's Drop throws that error away, DeviceBuffer::drop returns it.",
        variant: "drop-after-fault-cust",
        holds: |o| o.flag("cuMemFree fails after the fault"),
        evidence: |o| {
            o.steps
                .iter()
                .find(|s| s.call.starts_with("DeviceBuffer::drop"))
                .map(|s| format!("{} → {}", s.call, s.result))
                .unwrap_or_else(|| "DeviceBuffer::drop not recorded".to_owned())
        },
    },
    Statement {
        failure: "context-leak",
        binding: Binding::Cudarc,
        says: "cuCtxCreate per call without cuCtxDestroy fails with CUDA_ERROR_OUT_OF_MEMORY.",
        variant: "broken",
        holds: |o| Some(o.first_error()?.result == "CUDA_ERROR_OUT_OF_MEMORY"),
        evidence: |o| measure(o, "calls_completed", " contexts"),
    },
    Statement {
        failure: "context-leak",
        binding: Binding::Cust,
        says: "A legacy Context dropped at the end of its call is destroyed: nothing leaks.",
        variant: "fixed-cust",
        holds: |o| check(o, FREED),
        evidence: |o| yes_no("free memory back to its baseline", o.check(FREED)),
    },
    Statement {
        failure: "context-leak",
        binding: Binding::Cust,
        says: "A Context kept alive per call leaks as cuCtxCreate does, and fails at the same count.",
        variant: "broken-cust",
        holds: |o| Some(o.first_error()?.result == "CUDA_ERROR_OUT_OF_MEMORY"),
        evidence: |o| measure(o, "calls_completed", " contexts"),
    },
    Statement {
        failure: "unsynced-stream",
        binding: Binding::Cudarc,
        says: "Reading pinned memory after an asynchronous copy, before synchronising, reads stale data.",
        variant: "broken",
        holds: |o| check(o, FRESH).map(|fresh| !fresh),
        evidence: |o| measure(o, "stale_reads", " of 10"),
    },
    Statement {
        failure: "unsynced-stream",
        binding: Binding::Cust,
        says: "cust's asynchronous copy is unsafe; with it the same stale read happens.",
        variant: "broken-cust",
        holds: |o| check(o, FRESH).map(|fresh| !fresh),
        evidence: |o| measure(o, "stale_reads", " of 10"),
    },
    Statement {
        failure: "unsynced-stream",
        binding: Binding::Cust,
        says: "Stream::new drops the NON_BLOCKING flag: the stream it returns is blocking.",
        variant: "broken-cust",
        holds: |o| {
            o.flag("the stream cust made is non-blocking as asked")
                .map(|nb| !nb)
        },
        evidence: |o| {
            yes_no(
                "non-blocking as asked",
                o.flag("the stream cust made is non-blocking as asked"),
            )
        },
    },
    Statement {
        failure: "unsynced-stream",
        binding: Binding::Cust,
        says: "Two cust streams with a synchronous copy_from between their kernels run one after the other.",
        variant: "pipeline-cust",
        holds: |o| check(o, OVERLAP).map(|overlap| !overlap),
        evidence: |o| measure(o, "overlap", ""),
    },
    Statement {
        failure: "unsynced-stream",
        binding: Binding::Cudarc,
        says: "The same pipeline on cudarc's non-blocking streams overlaps.",
        variant: "pipeline",
        holds: |o| check(o, OVERLAP),
        evidence: |o| measure(o, "overlap", ""),
    },
    Statement {
        failure: "unsynced-stream",
        binding: Binding::Cust,
        says: "With async_copy_from on the stream itself, cust's pipeline overlaps again.",
        variant: "pipeline-async-cust",
        holds: |o| check(o, OVERLAP),
        evidence: |o| measure(o, "overlap", ""),
    },
    Statement {
        failure: "async-free-race",
        binding: Binding::Cudarc,
        says: "cuMemFreeAsync on one stream while another still reads hands the block to the next allocation.",
        variant: "broken",
        holds: |o| check(o, READER).map(|ok| !ok),
        evidence: |o| measure(o, "corrupted_reads", " of 5"),
    },
    Statement {
        failure: "async-free-race",
        binding: Binding::Cust,
        says: "DeviceBuffer::drop_async on the wrong stream races the same way.",
        variant: "broken-cust",
        holds: |o| check(o, READER).map(|ok| !ok),
        evidence: |o| measure(o, "corrupted_reads", " of 5"),
    },
    Statement {
        failure: "async-free-race",
        binding: Binding::Cust,
        says: "A plain Drop (cuMemFree) of a stream-ordered buffer does not wait for the reading stream either.",
        variant: "drop-cust",
        holds: |o| check(o, READER).map(|ok| !ok),
        evidence: |o| measure(o, "corrupted_reads", " of 5"),
    },
    Statement {
        failure: "async-free-race",
        binding: Binding::Cust,
        says: "An event recorded on the reader and waited on before drop_async fixes it.",
        variant: "fixed-cust",
        holds: |o| check(o, READER),
        evidence: |o| measure(o, "corrupted_reads", " of 5"),
    },
];

fn binding_name(b: Binding) -> &'static str {
    match b {
        Binding::Cudarc => "cudarc",
        Binding::Cust => "cust",
        Binding::CudaRuntimeCpp => "C++ runtime",
        Binding::Host => "host",
    }
}

fn entry<'a>(report: Option<&'a Report>, slug: &str, variant: &str) -> Option<&'a ResultEntry> {
    report?
        .results
        .iter()
        .find(|r| r.scenario == slug && r.variant == variant)
}

/// The page, and the statements whose variant is not in the catalogue.
pub fn page(catalog: &[Scenario], report: Option<&Report>) -> (String, Vec<String>) {
    let mut md = String::from(
        "# cudarc and cust, side by side\n\n\
         The catalogue runs four failures through both Rust bindings: cudarc (driver API, loaded at \
         run time) and Rust-CUDA's cust 0.3.2 (links libcuda, so its variants live in their own \
         binary, `casebook-cust`, which the harness starts as a child where a driver exists). Each \
         statement below names the variant that shows it; the last two columns are computed from \
         that variant's outcome in the latest GPU run.\n\n\
         | failure | binding | statement | variant | measured | shown |\n|---|---|---|---|---|---|\n",
    );
    let mut missing = Vec::new();
    for s in STATEMENTS {
        let declared = catalog
            .iter()
            .find(|sc| sc.slug == s.failure)
            .and_then(|sc| sc.variant(s.variant));
        if declared.is_none_or(|v| v.binding != s.binding) {
            missing.push(format!("{}::{}", s.failure, s.variant));
        }
        let (measured, shown) = match entry(report, s.failure, s.variant) {
            Some(r) if r.verdict == Verdict::Pass => (
                (s.evidence)(&r.outcome),
                match (s.holds)(&r.outcome) {
                    Some(true) => "yes",
                    Some(false) => "**no**",
                    None => "not recorded",
                },
            ),
            Some(_) => ("the trial did not pass".to_owned(), "**no**"),
            None => ("not run".to_owned(), "not run"),
        };
        let _ = writeln!(
            md,
            "| [{f}](scenarios/{f}.md) | {} | {} | `{}` | {measured} | {shown} |",
            binding_name(s.binding),
            s.says,
            s.variant,
            f = s.failure,
        );
    }
    md.push_str(
        "\nWhat the table comes to: cust's ownership types prevent the two leaks when values are \
         dropped where they are made, and allow both as soon as a value outlives its call. They do \
         nothing for stream ordering (the stale read and the asynchronous free race happen as in any \
         binding), and cust adds two failures of its own: its Drop implementations discard the \
         result of cuMemFree, and `Stream::new` makes every stream blocking, so one synchronous copy \
         serialises a pipeline meant to overlap.\n",
    );
    (md, missing)
}
