//! The cookbook: docs/ as an mdBook, generated from the code that ran.
//!
//! Every page is computed from the scenario declarations, the crates' own
//! doc comments, the variants' sources (pulled in by mdBook include anchors,
//! so no code exists only in markdown), the snapshots and the committed
//! report of the latest GPU run. `casebook docs` writes the pages;
//! `casebook docs --check` (and a trial of the snapshot suite) fails when
//! the committed ones are stale.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use casebook_model::Scenario;
use casebook_report::matrix::{MATRIX_JSON, Matrix};
use casebook_report::reproduce::Reproduction;
use casebook_report::run::Report;
use casebook_report::sanitizer::{SANITIZE_JSON, SanitizeReport};

mod bindings;
pub mod explain_index;
mod history;
mod index;
mod nextest;
mod page;
mod plot;
mod readme;
pub mod registration;
mod source;
mod survey;
mod words;

/// The generated files, by path relative to the repository root.
pub struct Book {
    pub files: BTreeMap<PathBuf, String>,
}

/// Folders whose every file is generated: a file there that the generator
/// no longer makes is stale too.
const GENERATED_DIRS: &[&str] = &["docs/src/scenarios", "docs/src/plots"];

/// What the pages are made from.
pub struct Inputs<'a> {
    pub catalog: &'a [Scenario],
    /// The claims no scenario decides, with the reason.
    pub undecided: &'a [casebook_model::ledger::Undecided],
    /// Every change of a claim's standing, oldest first.
    pub history: &'a [casebook_model::ledger::Change],
    pub root: &'a Path,
    /// `casebook run-all --help`, for the page on running it.
    pub run_all_help: String,
}

/// What is wrong with the ledger's history against the committed report
/// (see [`history::problems`]).
pub fn history_problems(inputs: &Inputs) -> anyhow::Result<Vec<String>> {
    let report: Option<Report> = evidence(inputs.root)?;
    Ok(history::problems(
        inputs.catalog,
        inputs.undecided,
        inputs.history,
        report.as_ref(),
    ))
}

pub fn generate(inputs: &Inputs) -> anyhow::Result<Book> {
    let report: Option<Report> = evidence(inputs.root)?;
    let sanitize = page::Sanitized {
        matrix: load(inputs.root, SANITIZE_JSON)?,
        passes: sanitize_passes(inputs.root)?,
    };
    let mut files = BTreeMap::new();
    for scenario in inputs.catalog {
        let plots = plot::plots(scenario, report.as_ref());
        for (name, svg) in &plots {
            files.insert(PathBuf::from(format!("docs/src/plots/{name}")), svg.clone());
        }
        let names: Vec<&String> = plots.keys().collect();
        files.insert(
            PathBuf::from(format!("docs/src/scenarios/{}.md", scenario.slug)),
            page::scenario_page(inputs.root, scenario, report.as_ref(), &sanitize, &names)?,
        );
        files.insert(
            PathBuf::from(format!("scenarios/{}/README.md", scenario.slug)),
            page::scenario_readme(inputs.root, scenario)?,
        );
    }
    files.insert("docs/src/SUMMARY.md".into(), index::summary(inputs.catalog));
    let explain = explain_index::build(inputs.root, inputs.catalog, report.as_ref())?;
    files.insert(
        explain_index::PATH.into(),
        explain_index::index_json(&explain)?,
    );
    files.insert(
        explain_index::HELDOUT_JSON.into(),
        explain_index::heldout_json(inputs.root)?,
    );
    files.insert(
        explain_index::PAGE.into(),
        explain_index::page(&explain, inputs.root)?,
    );
    files.insert(
        "README.md".into(),
        readme::readme(&explain, report.as_ref(), inputs.root)?,
    );
    files.insert(
        nextest::NEXTEST_CONFIG.into(),
        nextest::nextest_config(inputs.catalog),
    );
    files.extend(registration::files(inputs.root)?);
    let matrix: Option<Matrix> = load(inputs.root, MATRIX_JSON)?;
    files.insert(
        "docs/src/fleet.md".into(),
        match matrix {
            Some(m) => m.markdown(),
            None => "# The same failures on other GPUs\n\nNo fleet matrix is recorded yet: \
                     `casebook matrix` merges run-all reports of one commit from several \
                     machines into docs/evidence/matrix.json.\n"
                .to_owned(),
        },
    );
    files.insert(
        survey::PAGE.into(),
        survey::page(inputs.root, inputs.catalog, report.as_ref())?,
    );
    files.insert(
        "docs/src/bindings.md".into(),
        bindings::page(inputs.catalog, report.as_ref()),
    );
    files.insert(
        "docs/src/introduction.md".into(),
        index::introduction(inputs.catalog, report.as_ref()),
    );
    files.insert(
        "docs/src/symptoms.md".into(),
        index::symptoms(inputs.catalog, report.as_ref()),
    );
    files.insert(
        "docs/src/claims.md".into(),
        index::claims(inputs.catalog, inputs.undecided, report.as_ref()),
    );
    files.insert(
        history::PAGE.into(),
        history::page(
            inputs.catalog,
            inputs.undecided,
            inputs.history,
            report.as_ref(),
        ),
    );
    files.insert(
        "docs/claims.json".into(),
        index::ledger_json(inputs.catalog, inputs.undecided, report.as_ref()),
    );
    let reproductions = REPRODUCE_JSON
        .iter()
        .filter_map(|f| load::<Reproduction>(inputs.root, f).transpose())
        .collect::<anyhow::Result<Vec<_>>>()?;
    files.insert(
        "docs/src/running.md".into(),
        index::running(
            &inputs.run_all_help,
            report.as_ref(),
            load::<Report>(inputs.root, index::BENCH_FILE)?.as_ref(),
            &reproductions,
        ),
    );
    Ok(Book { files })
}

/// The committed `casebook reproduce` results, one per GPU.
pub const REPRODUCE_JSON: &[&str] = &[
    "docs/evidence/reproduce-h100.json",
    "docs/evidence/reproduce-h200.json",
    "docs/evidence/reproduce-whole-h100-859e916.json",
    "docs/evidence/reproduce-whole-h100.json",
    "docs/evidence/reproduce-goal-h100-fd13bb9.json",
    "docs/evidence/reproduce-whole-h100-c896bd6.json",
    "docs/evidence/reproduce-whole-h100-8a57fe4.json",
];

/// The committed evidence: the newest full run, with the trials run since
/// in their places (see [`casebook_report::run::evidence`]).
fn evidence(root: &Path) -> anyhow::Result<Option<Report>> {
    casebook_report::run::evidence(root).map_err(anyhow::Error::msg)
}

/// The committed passes of a few cases' variants under compute-sanitizer
/// (`docs/evidence/sanitize-subset-*.json`), each with its file, by name.
fn sanitize_passes(root: &Path) -> anyhow::Result<Vec<(String, SanitizeReport)>> {
    let mut files: Vec<String> = std::fs::read_dir(root.join("docs/evidence"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with("sanitize-subset-") && n.ends_with(".json"))
                .map(|n| format!("docs/evidence/{n}"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut passes = Vec::new();
    for file in files {
        if let Some(report) = load(root, &file)? {
            passes.push((file, report));
        }
    }
    Ok(passes)
}

fn load<T: serde::de::DeserializeOwned>(root: &Path, file: &str) -> anyhow::Result<Option<T>> {
    let path = root.join(file);
    if !path.is_file() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path)?;
    Ok(Some(
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?,
    ))
}

impl Book {
    pub fn write(&self, root: &Path) -> anyhow::Result<usize> {
        for dir in GENERATED_DIRS {
            let _ = std::fs::remove_dir_all(root.join(dir));
        }
        for (path, text) in &self.files {
            let full = root.join(path);
            if let Some(parent) = full.parent() {
                std::fs::create_dir_all(parent)?;
            }
            // Unchanged files keep their time, so that cargo rebuilds nothing
            // for a manifest written again as it was.
            if std::fs::read_to_string(&full).ok().as_deref() != Some(text.as_str()) {
                std::fs::write(full, text)?;
            }
        }
        Ok(self.files.len())
    }

    /// The files on disk that differ from what the generator makes now, or
    /// that it no longer makes.
    pub fn stale(&self, root: &Path) -> Vec<PathBuf> {
        let mut stale: Vec<PathBuf> = self
            .files
            .iter()
            .filter(|(path, text)| {
                std::fs::read_to_string(root.join(path)).ok().as_deref() != Some(text.as_str())
            })
            .map(|(path, _)| path.clone())
            .collect();
        for dir in GENERATED_DIRS {
            for entry in std::fs::read_dir(root.join(dir))
                .into_iter()
                .flatten()
                .flatten()
            {
                let rel = PathBuf::from(dir).join(entry.file_name());
                if !self.files.contains_key(&rel) {
                    stale.push(rel);
                }
            }
        }
        stale
    }
}
