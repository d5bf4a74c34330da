//! The binding comparison page: what cudarc and cust do with the same
//! failures. Each statement is declared with the variant that shows it (in
//! its scenario), and whether the latest GPU run did show it is computed
//! from that variant's outcome.

use std::fmt::Write as _;

use casebook_model::{Binding, Scenario};
use casebook_report::Verdict;
use casebook_report::run::{Report, ResultEntry};

fn binding_name(b: Binding) -> &'static str {
    match b {
        Binding::Cudarc => "cudarc",
        Binding::Cust => "cust",
        Binding::CudaRuntimeCpp => "C++ runtime",
        Binding::Pytorch => "PyTorch",
        Binding::Host => "host",
    }
}

fn entry<'a>(report: Option<&'a Report>, slug: &str, variant: &str) -> Option<&'a ResultEntry> {
    report?
        .results
        .iter()
        .find(|r| r.scenario == slug && r.variant == variant)
}

/// A count in words, as a sentence says it.
fn count_words(n: usize) -> String {
    const WORDS: [&str; 11] = [
        "no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    WORDS
        .get(n)
        .map_or_else(|| n.to_string(), |w| (*w).to_owned())
}

/// The page: every statement a variant of the catalogue declares.
pub fn page(catalog: &[Scenario], report: Option<&Report>) -> String {
    let both = catalog
        .iter()
        .filter(|s| {
            let has = |b: Binding| s.variants.iter().any(|v| v.binding == b);
            has(Binding::Cudarc) && has(Binding::Cust)
        })
        .count();
    let mut md = format!(
        "# cudarc and cust, side by side\n\n\
         The catalogue runs {} failure{} through both Rust bindings: cudarc (driver API, loaded at \
         run time) and Rust-CUDA's cust 0.3.2 (links libcuda, so its variants live in their own \
         binary, `casebook-cust`, which the harness starts as a child where a driver exists). Each \
         statement below names the variant that shows it; the last two columns are computed from \
         that variant's outcome in the latest GPU run.\n\n\
         | failure | binding | statement | variant | measured | shown |\n|---|---|---|---|---|---|\n",
        count_words(both),
        if both == 1 { "" } else { "s" },
    );
    for scenario in catalog {
        for variant in &scenario.variants {
            for s in &variant.statements {
                let (measured, shown) = match entry(report, scenario.slug, variant.name) {
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
                    binding_name(variant.binding),
                    s.says,
                    variant.name,
                    f = scenario.slug,
                );
            }
        }
    }
    md.push_str(
        "\nWhat the table comes to: cust's ownership types prevent the two leaks when values are \
         dropped where they are made, and allow both as soon as a value outlives its call. They do \
         nothing for stream ordering (the stale read and the asynchronous free race happen as in any \
         binding), and cust adds two failures of its own: its Drop implementations discard the \
         result of cuMemFree, and `Stream::new` makes every stream blocking, so one synchronous copy \
         serialises a pipeline meant to overlap. cudarc's safe layer guards host memory only \
         where it tracks events: a `PinnedHostSlice` copied on a stream the program created is \
         waited for before the host writes it again, and on the default stream of a context with \
         no stream of its own it is not (the two async-copy-lifetime rows). The same event \
         tracking breaks stream capture: with it on, a buffer written before a capture cannot be \
         used inside it, and with it off (since cudarc#591) a buffer used in a capture and dropped \
         after its graph leaves no error behind (the two graph-capture-misuse rows).\n",
    );
    md
}
