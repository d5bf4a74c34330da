//! The scenario model of cuda-casebook.
//!
//! A [`Scenario`] declares a failure from the seed articles: its symptom, the
//! claims it tests, its variants and what each variant must show. A variant
//! runs in a child process and reports through a [`Recorder`]; the harness
//! turns what it recorded into an [`Outcome`], and computes every verdict from
//! that outcome.

mod c_abi;
pub mod cuda_errors;
pub mod ledger;
pub mod names;
mod outcome;
pub mod pytorch;
mod recorder;
mod scenario;
pub mod timing;
mod trial_id;

pub use c_abi::CRecorder;
pub use names::{CheckName, FactName, MeasureName, Name, SeriesName, Unit};
pub use outcome::{
    Axes, Check, Event, Iteration, Measure, Outcome, Step, Symptom, Termination, audit,
};
pub use recorder::Recorder;
pub use scenario::{
    Binding, CGROUP_ROOT, CUST_PROGRAM, Claim, ClaimVerdict, Code, Control, CppFn, Expect,
    IntoVariants, NEIGHBOURS_ROOM, NOT_WRITTEN, OneChange, PAIR, Pair, Part, Passage, Program,
    Reach, Report, Requirement, Role, Runner, SanitizerSees, Scenario, Source, Statement, Variant,
    VariantFn, thread_url,
};
pub use trial_id::TrialId;

/// What a case's declaration names, in one line: `use
/// casebook_model::prelude::*;`. The scenario, its variants and claims, the
/// recorder, and the `cudarc!`, `cudarc_pair!` and `cpp_pair!` macros. The
/// recorded driver calls are `casebook_driver`'s, whose prelude is this one
/// with them.
pub mod prelude {
    pub use crate::{
        Claim, ClaimVerdict, Control, Expect, Outcome, Pair, Part, Passage, Program, Reach,
        Recorder, Report, Requirement, Scenario, Source, Symptom, Variant, cpp_pair, cudarc,
        cudarc_pair, variants,
    };
}

/// A scenario's variants, in the order given: single [`Variant`]s and
/// [`Pair`]s, each pair its broken variant and then its fix.
#[macro_export]
macro_rules! variants {
    ($($declared:expr),* $(,)?) => {{
        let mut variants: Vec<$crate::Variant> = Vec::new();
        $(variants.extend($crate::IntoVariants::into_variants($declared));)*
        variants
    }};
}

/// Set in a variant's process when it runs under compute-sanitizer.
pub const SANITIZER_ENV: &str = "CASEBOOK_SANITIZER";

/// Whether this variant runs under compute-sanitizer. Variants that fill the
/// GPU or run long pick a reduced form then, and record that they did.
pub fn under_sanitizer() -> bool {
    std::env::var_os(SANITIZER_ENV).is_some()
}

/// The fact a variant records when it runs its reduced form.
pub use names::global::REDUCED;

/// Whether to run the reduced form made for compute-sanitizer; records
/// that it does.
pub fn reduced_for_sanitizer(rec: &mut Recorder) -> bool {
    let reduced = under_sanitizer();
    if reduced {
        rec.fact(REDUCED, true);
    }
    reduced
}

/// `normal`, or `reduced` where the variant runs its reduced form under
/// compute-sanitizer ([`reduced_for_sanitizer`], which records that it
/// does): a count or a size a variant cuts for the tool.
pub fn normal_or_reduced<T>(rec: &mut Recorder, normal: T, reduced: T) -> T {
    if reduced_for_sanitizer(rec) {
        reduced
    } else {
        normal
    }
}

/// How many of `runs` runs showed a failure, in words that are the same on
/// every GPU when the reproduction is deterministic. The C++ variants have
/// the same words in casebook.h (`runs_in_words`).
pub fn runs_in_words(count: usize, runs: usize) -> &'static str {
    match count {
        0 => "none",
        n if n == runs => "every run",
        _ => "some runs (flaky: the scenario is not deterministic)",
    }
}
