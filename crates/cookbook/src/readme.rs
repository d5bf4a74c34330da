//! The README, for users: the template `readme.md` with what only the code
//! and the latest run know filled in (an answer of `explain`, its held-out
//! measure, five rows of the evidence, the PyTorch texts that have a case).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use casebook_explain::{Index, cli, explain, heldout};
use casebook_harness::report::Report;
use casebook_model::{Binding, Role, Scenario};

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
    ("invalid-device-ordinal", "broken-cpp"),
    ("invalid-device-ordinal", "fixed-cpp"),
];

pub fn readme(
    root: &Path,
    catalog: &[Scenario],
    index: &Index,
    report: Option<&Report>,
) -> anyhow::Result<String> {
    let mut answer = explain(index, EXAMPLE);
    answer.matches.truncate(1);
    let example = format!("$ casebook-explain \"{EXAMPLE}\"\n{}", cli::render(&answer));
    let held = crate::explain_index::read_heldout(root)?;
    let score = heldout::evaluate(index, &held);
    let measure = format!(
        "Measured on {} whole texts pasted in public threads that no case cites \
         (`{}`): {}.",
        held.paste.len(),
        heldout::TEXTS_TOML,
        score.summary()
    );
    let (run, rows, pytorch, texts) = match report {
        Some(r) => (
            format!(
                "{}, driver {}, CUDA {}, {}",
                r.environment.gpu,
                r.environment.driver,
                r.environment.cuda,
                r.created.get(..10).unwrap_or(&r.created)
            ),
            rows(r),
            r.run
                .pytorch
                .as_deref()
                .map(|p| format!("PyTorch {p}"))
                .unwrap_or_else(|| "no PyTorch in the run".to_owned()),
            pytorch_texts(catalog, r),
        ),
        None => (
            "no run recorded".to_owned(),
            String::new(),
            String::new(),
            String::new(),
        ),
    };
    Ok(TEMPLATE
        .replace("{explain_example}", &example)
        .replace("{explain_measure}", &measure)
        .replace("{run}", &run)
        .replace("{example_rows}", &rows)
        .replace("{pytorch}", &pytorch)
        .replace("{pytorch_texts}", &texts))
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
                casebook_harness::judge::Verdict::Pass => "as declared",
                casebook_harness::judge::Verdict::Fail => "NOT as declared",
            }
        );
    }
    md
}

/// Each case with PyTorch variants that fail, and the errors they returned
/// (their names, cut before the first figure), each once.
fn pytorch_texts(catalog: &[Scenario], report: &Report) -> String {
    let mut by_case: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for r in &report.results {
        if r.binding != Binding::Pytorch || r.role == Role::Fixed {
            continue;
        }
        let Some(pos) = catalog.iter().position(|s| s.slug == r.scenario) else {
            continue;
        };
        let entry = by_case.entry(pos).or_default();
        for step in r.outcome.steps.iter().filter(|s| s.is_error()) {
            if !entry.contains(&step.result) {
                entry.push(step.result.clone());
            }
        }
    }
    let mut md = String::new();
    for (pos, texts) in by_case {
        if texts.is_empty() {
            continue;
        }
        let slug = catalog[pos].slug;
        let quoted: Vec<String> = texts.iter().map(|t| format!("`{t}`")).collect();
        let _ = writeln!(
            md,
            "- [{slug}](docs/src/scenarios/{slug}.md): {}",
            quoted.join("; ")
        );
    }
    md
}
