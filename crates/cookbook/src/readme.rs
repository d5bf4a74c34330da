//! The README, for users: the template `readme.md` with what only the code
//! and the latest run know filled in (an answer of `explain`, how well it
//! finds the case, and three rows of the evidence).

use std::fmt::Write as _;

use casebook_explain::{Index, cli, explain};
use casebook_report::run::Report;

const TEMPLATE: &str = include_str!("readme.md");

/// What the README's example pastes: the text fork-after-init's PyTorch
/// variant returned.
const EXAMPLE: &str = "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA \
     with multiprocessing, you must use the 'spawn' start method";

/// The trials whose rows the README shows.
const EXAMPLE_ROWS: &[(&str, &str)] = &[
    ("missing-free", "broken"),
    ("missing-free", "fixed"),
    ("sticky-error", "broken"),
];

pub fn readme(
    index: &Index,
    report: Option<&Report>,
    root: &std::path::Path,
) -> anyhow::Result<String> {
    let mut answer = explain(index, EXAMPLE);
    answer.matches.truncate(1);
    let example = format!("$ casebook-explain \"{EXAMPLE}\"\n{}", cli::render(&answer));
    let (run, rows) = match report {
        Some(r) => (
            format!(
                "{}, driver {}, CUDA {}, {}",
                r.environment.gpu,
                r.environment.driver,
                r.environment.cuda,
                r.created.get(..10).unwrap_or(&r.created)
            ),
            rows(r),
        ),
        None => ("no run recorded".to_owned(), String::new()),
    };
    Ok(TEMPLATE
        .replace("{explain_example}", &example)
        .replace(
            "{explain_figures}",
            &crate::explain_index::how_well(index, root)?,
        )
        .replace("{run}", &run)
        .replace("{example_rows}", &rows))
}

fn rows(report: &Report) -> String {
    let mut md =
        String::from("| case | variant | expected | observed | trial |\n|---|---|---|---|---|\n");
    for r in EXAMPLE_ROWS.iter().filter_map(|(scenario, variant)| {
        report
            .results
            .iter()
            .find(|r| r.scenario == *scenario && r.variant == *variant)
    }) {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} |",
            r.scenario,
            r.variant,
            r.expected.replace('|', "\\|"),
            r.observed.replace('|', "\\|"),
            match r.verdict {
                casebook_report::Verdict::Pass => "as declared",
                casebook_report::Verdict::Fail => "NOT as declared",
            }
        );
    }
    md
}
