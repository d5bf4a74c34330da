//! The snapshot regression suite: every variant of every scenario, each in
//! its own child process, judged and compared with its committed snapshot.
//! Without a GPU the GPU trials are ignored, with the reason. Also checks
//! that the generated cookbook is fresh and that the claims ledger is
//! complete, every quote found word for word in its seed article.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use casebook_model::Source;
use libtest_mimic::{Completion, Failed, Trial};

fn main() -> std::process::ExitCode {
    let root = casebook_harness::workspace::root();
    let docs_root = root.clone();
    let list_root = root.clone();
    let changes_root = root.clone();
    let index_root = root.clone();
    let docs = Trial::test("catalog::docs-are-fresh", move || {
        let book = cuda_casebook::book(&docs_root).map_err(|e| format!("{e:#}"))?;
        let stale = book.stale(&docs_root);
        if stale.is_empty() {
            return Ok(());
        }
        let list: Vec<String> = stale.iter().map(|p| p.display().to_string()).collect();
        Err(format!(
            "stale generated files (run `cargo xtask docs`):\n{}",
            list.join("\n")
        )
        .into())
    });
    let ledger = Trial::ignorable_test(
        "catalog::claims-ledger-is-complete-and-verbatim",
        move || check_ledger(&root),
    );
    let goal_list = Trial::test(
        "catalog::the-goal-s-trial-list-names-catalogue-trials",
        move || {
            let path = list_root.join(GOAL_TRIALS);
            let named = casebook_harness::commands::run_all::read_trial_list(&path)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            let unknown = casebook_harness::commands::run_all::unknown_trials(
                &cuda_casebook::catalog(),
                &named,
            );
            if !unknown.is_empty() {
                return Err(format!("{GOAL_TRIALS} names no trial {}", unknown.join(", ")).into());
            }
            if named.len() != GOAL_TRIAL_COUNT {
                return Err(format!(
                    "{GOAL_TRIALS} names {} trials, not {GOAL_TRIAL_COUNT}",
                    named.len()
                )
                .into());
            }
            Ok(())
        },
    );
    let changes = Trial::test(
        "catalog::controls-differ-by-their-declared-line",
        move || check_one_changes(&changes_root).map_err(Failed::from),
    );
    let index = Trial::test(
        "catalog::explain-holds-only-the-cases-own-failures",
        move || check_explain_run_texts(&index_root).map_err(Failed::from),
    );
    casebook_harness::environment::set_toolkit(casebook_kernels::TOOLKIT);
    casebook_harness::suite::main(
        cuda_casebook::catalog(),
        vec![docs, ledger, goal_list, changes, index],
    )
}

/// The errors explain's index takes from the run are the case's own
/// failures: none comes from a fixed variant (its errors are probes made on
/// purpose) or from a contrast that is a claim's control (it fails, where it
/// fails, for the other cause it was made to show).
fn check_explain_run_texts(root: &Path) -> Result<(), String> {
    let path = root.join("docs/src/explain/index.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let index: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let mut problems = Vec::new();
    for s in cuda_casebook::catalog() {
        let controls: BTreeSet<&str> = s.claims.iter().flat_map(|c| c.control.runs()).collect();
        let case = index["cases"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["scenario"] == s.slug);
        let texts = case
            .and_then(|c| c["texts"].as_array())
            .into_iter()
            .flatten();
        for t in texts.filter(|t| t["from"] == "run") {
            let name = t["variant"].as_str().unwrap_or_default();
            let Some(v) = s.variant(name) else {
                problems.push(format!("{}: the index names no variant `{name}`", s.slug));
                continue;
            };
            let control = v.role == casebook_model::Role::Contrast && controls.contains(name);
            if v.role == casebook_model::Role::Fixed || control {
                problems.push(format!(
                    "{}: the index holds {:?}, an error of {name}, which is a fixed variant or a control",
                    s.slug, t["text"]
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// Every control that declares its one parameter names another variant of
/// its scenario, and each of the two lines it declares stands, word for
/// word, in its own variant's code: the diff the page shows is the code's.
fn check_one_changes(root: &Path) -> Result<(), String> {
    let normal = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut problems = Vec::new();
    for s in cuda_casebook::catalog() {
        let code = |name: &str| -> Option<String> {
            let file = s.variant(name)?.code?.file;
            std::fs::read_to_string(root.join("scenarios").join(s.slug).join(file)).ok()
        };
        for v in &s.variants {
            let Some(change) = v.one_change else { continue };
            if change.from == v.name || s.variant(change.from).is_none() {
                problems.push(format!(
                    "{}: it controls `{}`, no other variant of the scenario",
                    s.trial_id(v),
                    change.from
                ));
                continue;
            }
            for (variant, line) in [(change.from, change.was), (v.name, change.is)] {
                let found = code(variant).is_some_and(|text| {
                    let text = normal(&text);
                    line.lines().all(|l| text.contains(&normal(l)))
                });
                if !found || normal(line).is_empty() {
                    problems.push(format!(
                        "{}: the line `{line}` is not in {variant}'s code",
                        s.trial_id(v)
                    ));
                }
            }
            if normal(change.was) == normal(change.is) {
                problems.push(format!(
                    "{}: the declared change changes nothing",
                    s.trial_id(v)
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The trials the schedule's goal is timed on (`run-all --trials`), and how
/// many: dacd71a's catalogue.
const GOAL_TRIALS: &str = "docs/evidence/trials-dacd71a.txt";
const GOAL_TRIAL_COUNT: usize = 161;

/// Every claim id is unique; docs/claims.json lists exactly the declared and
/// the undecided claims; every quote stands, word for word, in its seed or
/// in the passage of NVIDIA's or PyTorch's documentation it is quoted from.
fn check_ledger(root: &Path) -> Result<Completion, Failed> {
    let catalog = cuda_casebook::catalog();
    let normal = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut problems = Vec::new();
    let mut seeded = Vec::new();
    for c in catalog.iter().flat_map(|s| s.claims.iter()) {
        match c.source {
            Source::Seed(file) => seeded.push((c.id, file, c.quote)),
            Source::Nvidia(passage) | Source::Pytorch(passage) => {
                if !normal(passage.text).contains(&normal(c.quote)) {
                    problems.push(format!(
                        "{}: the quote is not word for word in its passage of {} ({})",
                        c.id, passage.document, passage.url
                    ));
                }
            }
        }
    }
    let declared = catalog.iter().flat_map(|s| s.claims.iter().map(|c| c.id));
    let undecided = cuda_casebook::ledger::UNDECIDED
        .iter()
        .map(|u| (u.id, u.seed, u.quote));
    seeded.extend(undecided);
    let all: Vec<&str> = declared
        .chain(cuda_casebook::ledger::UNDECIDED.iter().map(|u| u.id))
        .collect();
    let mut ids = BTreeSet::new();
    for id in &all {
        if !ids.insert(*id) {
            problems.push(format!("claim {id} is in the ledger twice"));
        }
    }
    match cuda_casebook::history_problems(root) {
        Ok(found) => problems.extend(found),
        Err(e) => problems.push(format!("the ledger's history: {e:#}")),
    }
    let text = std::fs::read_to_string(root.join("docs/claims.json"))
        .map_err(|e| format!("docs/claims.json: {e}"))?;
    let file: Vec<serde_json::Value> =
        serde_json::from_str(&text).map_err(|e| format!("docs/claims.json: {e}"))?;
    let in_file: BTreeSet<&str> = file.iter().filter_map(|e| e["id"].as_str()).collect();
    for id in in_file.difference(&ids) {
        problems.push(format!(
            "docs/claims.json has {id}, which no scenario declares and the ledger does not list"
        ));
    }
    for id in ids.difference(&in_file) {
        problems.push(format!(
            "{id} is declared but missing from docs/claims.json (run `cargo xtask docs`)"
        ));
    }
    let Some(seeds) = seeds_dir(root) else {
        if !problems.is_empty() {
            return Err(problems.join("\n").into());
        }
        return Ok(Completion::ignored_with(
            "the seed articles are not here (../shared/seeds or CASEBOOK_SEEDS): quotes not checked",
        ));
    };
    for (id, seed, quote) in &seeded {
        match std::fs::read_to_string(seeds.join(seed)) {
            Err(e) => problems.push(format!("{id}: cannot read seed {seed}: {e}")),
            Ok(article) if !normal(&article).contains(&normal(quote)) => {
                problems.push(format!("{id}: the quote is not word for word in {seed}"))
            }
            Ok(_) => {}
        }
    }
    if problems.is_empty() {
        Ok(Completion::Completed)
    } else {
        Err(problems.join("\n").into())
    }
}

fn seeds_dir(root: &Path) -> Option<PathBuf> {
    std::env::var_os("CASEBOOK_SEEDS")
        .map(PathBuf::from)
        .into_iter()
        .chain([root.join("../shared/seeds"), root.join("shared/seeds")])
        .find(|d| d.is_dir())
}
