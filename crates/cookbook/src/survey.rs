//! The book's page "What users paste": the texts a survey of public threads
//! found users pasting most (`crates/cookbook/survey.toml`), each with the
//! case and the trial that reproduce it and the text that trial returned in
//! the latest GPU run, or what a case for it still needs.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use casebook_model::Scenario;
use casebook_report::run::Report;
use serde::Deserialize;

/// The survey, relative to the repository root.
pub const SURVEY_TOML: &str = "crates/cookbook/survey.toml";
/// The page it becomes.
pub const PAGE: &str = "docs/src/what-users-paste.md";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Survey {
    row: Vec<Row>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    text: String,
    threads: Vec<String>,
    cause: String,
    case: Option<String>,
    variant: Option<String>,
    known: Option<String>,
    missing: Option<String>,
}

/// `owner/repo#N` as a link to the thread.
fn thread(id: &str) -> String {
    casebook_model::thread_url(id).map_or_else(|| id.to_owned(), |url| format!("[{id}]({url})"))
}

/// The first error the trial returned, whole, as the run recorded it (its
/// name where the run kept no message), as HTML for a table's cell.
fn returned(report: Option<&Report>, case: &str, variant: &str) -> Option<String> {
    let entry = report?
        .results
        .iter()
        .find(|r| r.scenario == case && r.variant == variant)?;
    let step = entry.outcome.first_error()?;
    let name = step.result.split(':').next().unwrap_or(&step.result);
    let text = match step.message.as_deref() {
        // A Python exception's message starts with its name already.
        Some(m) if m.starts_with(name) => m.to_owned(),
        Some(m) => format!("{}: {m}", step.result),
        None => step.result.clone(),
    };
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            l.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('|', "&#124;")
        })
        .collect();
    Some(format!("<code>{}</code>", lines.join("<br>")))
}

/// Plain text for a table's cell: a long error in a code span would wrap
/// at every character.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
        .replace('*', "\\*")
        .replace('_', "\\_")
}

pub fn page(root: &Path, catalog: &[Scenario], report: Option<&Report>) -> anyhow::Result<String> {
    let path = root.join(SURVEY_TOML);
    let survey: Survey = toml::from_str(
        &std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?,
    )
    .with_context(|| format!("parsing {}", path.display()))?;
    let mut md = String::from(
        "# What users paste\n\n\
         The error texts users paste most in public issue threads (PyTorch, vLLM, transformers, \
         accelerate, DeepSpeed, NCCL, JAX, TensorFlow, CuPy, llama.cpp, candle, cudarc, Triton) \
         whose cause one GPU can provoke, with threads that show each and the cause their \
         maintainers gave. The threads are older than the PyTorch on the casebook's GPU \
         machine: where a case reproduces the text, the last column gives what its run returned \
         there, word for word. Failures that cannot be provoked on these machines are listed \
         on [Paste your error](paste-your-error.md).\n\n\
         | text users paste | threads | cause given in the threads | reproduced by | what the run returned |\n\
         |---|---|---|---|---|\n",
    );
    let (mut reproduced, mut open) = (0, 0);
    for row in &survey.row {
        let threads: Vec<String> = row.threads.iter().map(|t| thread(t)).collect();
        let (by, got) = match (&row.case, &row.variant, &row.known) {
            (Some(case), Some(variant), _) => {
                anyhow::ensure!(
                    catalog
                        .iter()
                        .any(|s| s.slug == case && s.variants.iter().any(|v| v.name == variant)),
                    "{SURVEY_TOML}: {} is no trial of the catalogue",
                    casebook_model::TrialId::new(case, variant)
                );
                reproduced += 1;
                (
                    format!("[{case}](scenarios/{case}.md#variant-{variant}) `{variant}`"),
                    returned(report, case, variant)
                        .unwrap_or_else(|| "not in the latest run".to_owned()),
                )
            }
            (_, _, Some(known)) => (
                format!("cannot be provoked here: `{known}`"),
                "(not run)".to_owned(),
            ),
            _ => {
                open += 1;
                (
                    "no case yet".to_owned(),
                    row.missing.clone().unwrap_or_default(),
                )
            }
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {by} | {got} |",
            cell(&row.text),
            threads.join(", "),
            cell(&row.cause),
        );
    }
    let _ = writeln!(
        md,
        "\n{reproduced} of these {} texts are reproduced by a trial of the catalogue; {open} have \
         no case yet, and the row says what one needs.",
        survey.row.len()
    );
    Ok(md)
}
