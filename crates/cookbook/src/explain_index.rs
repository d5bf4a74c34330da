//! `explain`'s index (`docs/src/explain/index.json`), made from what ran and
//! what users wrote: the error each variant returned in the committed GPU
//! run (its name and the library's whole sentence), the device-side
//! assertions it printed, and the texts users paste for the same failure,
//! kept in each case's `pasted.toml`. Failures the project cannot provoke
//! on its machines come from `known-failures/*.toml`, as entries that say
//! so.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Context;
use casebook_explain::index::{Case, Index, RunCommands, RunInfo, Text};
use casebook_explain::{features, heldout};
use casebook_model::{Binding, Expect, Role, Scenario, Symptom};
use casebook_report::run::{Report, ResultEntry};
use serde::Deserialize;

pub use casebook_explain::index::INDEX_JSON as PATH;

/// A case's `pasted.toml`.
pub const PASTED_TOML: &str = "pasted.toml";

/// The folder of failures that cannot be provoked here.
pub const KNOWN_FAILURES: &str = "known-failures";

/// Results that say "not yet", not "went wrong" (`cuStreamQuery` while the
/// work runs): NVIDIA documents them as no error.
const NOT_ERRORS: &[&str] = &["CUDA_ERROR_NOT_READY", "cudaErrorNotReady"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pasted {
    #[serde(default)]
    pub text: Vec<PastedText>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PastedText {
    /// `owner/repo#N`.
    pub report: String,
    pub versions: Option<String>,
    /// Who in the thread traced the failure to the case's cause, and how:
    /// for a reader checking that the text belongs here.
    pub cause: Option<String>,
    pub text: String,
}

/// A `known-failures/<slug>.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownFailure {
    pub title: String,
    pub cause: String,
    pub check: String,
    pub why_not_here: String,
    pub reports: Vec<String>,
    #[serde(default)]
    pub text: Vec<PastedText>,
}

pub fn read_pasted(path: &Path) -> anyhow::Result<Vec<PastedText>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let raw = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let pasted: Pasted = toml::from_str(&raw).with_context(|| format!("{}", path.display()))?;
    Ok(pasted.text)
}

pub fn read_known_failures(root: &Path) -> anyhow::Result<Vec<(String, KnownFailure)>> {
    let dir = root.join(KNOWN_FAILURES);
    let mut out = Vec::new();
    if !dir.exists() {
        return Ok(out);
    }
    let mut paths: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    for path in paths {
        let slug = path
            .file_stem()
            .and_then(|s| s.to_str())
            .context("a known failure's file name")?
            .to_owned();
        let raw = std::fs::read_to_string(&path)?;
        let known: KnownFailure =
            toml::from_str(&raw).with_context(|| format!("{}", path.display()))?;
        out.push((slug, known));
    }
    Ok(out)
}

/// The held-out texts as the book's page reads them: a JSON array of the
/// texts, in the file's order.
pub const HELDOUT_JSON: &str = "docs/src/explain/heldout.json";

/// The "Paste your error" page.
pub const PAGE: &str = "docs/src/paste-your-error.md";

/// The latest independent test of `explain`, committed whole, and what it
/// found (before the changes it led to), as the page and the README say it.
pub const LATEST_TEST: &str = "docs/evidence/explain-independent-test-26.md";
pub const LATEST_TEST_TEXTS: usize = 40;
pub const LATEST_TEST_FOUND: &str = "found the right case first for 24 of the 26 whose cause a \
     case reproduces (8 of them only through a tie the answer states) and among the first three \
     for 24 (1 got no answer); of the 14 whose cause none reproduces, 9 were answered right: 4 \
     with no reproduced case and 5 with the known failure its tester had named as fitting. Of 10 \
     more that tell a covered failure in prose alone, 5 were found first (2 through a tie)";

/// How well the ranking finds the case, in a sentence: on the held-out
/// texts (computed here) and in the latest independent test.
pub fn how_well(index: &Index, root: &Path) -> anyhow::Result<String> {
    let held = read_heldout(root)?;
    let score = heldout::evaluate(index, &held);
    Ok(format!(
        "on {} whole texts from public threads that no case cites, each labelled with the case \
         its thread's cause is, or none ({}): {}. The latest independent test, on {LATEST_TEST_TEXTS} texts from \
         threads its tester chose before the tool ran ({LATEST_TEST}), {LATEST_TEST_FOUND}.",
        held.paste.len(),
        heldout::TEXTS_TOML,
        score.summary()
    ))
}

pub fn heldout_json(root: &Path) -> anyhow::Result<String> {
    let held = read_heldout(root)?;
    let texts: Vec<&str> = held.paste.iter().map(|p| p.text.as_str()).collect();
    Ok(serde_json::to_string(&texts)? + "\n")
}

pub fn read_heldout(root: &Path) -> anyhow::Result<heldout::HeldOut> {
    let path = root.join(heldout::TEXTS_TOML);
    let raw = std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
    heldout::parse(&raw).with_context(|| format!("{}", path.display()))
}

/// The page: a text box, the answer computed in the page from the same
/// index by the same ranking (`docs/src/explain/explain.js`), and how well
/// the ranking did on the held-out texts.
pub fn page(index: &Index, root: &Path) -> anyhow::Result<String> {
    let reproduced = index.cases.iter().filter(|c| c.reproduced).count();
    let known = index.cases.len() - reproduced;
    let texts: usize = index.cases.iter().map(|c| c.texts.len()).sum();
    let users: usize = index
        .cases
        .iter()
        .flat_map(|c| &c.texts)
        .filter(|t| t.from != "run")
        .count();
    Ok(format!(
        "# Paste your error\n\n\
         Paste a CUDA error as you got it: the whole traceback, the log with nvidia-smi's output, \
         figures, paths and device numbers and all. The page names the cases of this casebook that \
         reproduce it, best first, with the cause, the fix and the page that shows both running. \
         Nothing leaves your browser: the answer is computed here, from the same index and by the \
         same ranking as `casebook explain`.\n\n\
         <textarea id=\"explain-input\" rows=\"12\" style=\"width: 100%; font-family: monospace;\" \
         placeholder=\"RuntimeError: CUDA error: device-side assert triggered\"></textarea>\n\n\
         <div id=\"explain-output\"></div>\n\n\
         ## What it knows\n\n\
         {reproduced} cases reproduced on a GPU and {known} known failures that cannot be provoked on \
         the casebook's machines (each says why), with {texts} texts: the errors each case's variants \
         returned in the latest GPU run, and {users} texts users pasted in public threads, each \
         cited. A match needs an error name or a phrase of a message in common with a case; words \
         every CUDA error has (\"CUDA\", \"error\", \"failed\") never make one, and a phrase \
         that holds an English function word (\"the\", \"to\", \"was\", \"you\") counts only \
         where two other words in it are neither such nor generic: \"was compiled with\", \
         \"do you have\" and \"failed to allocate\" are pieces of any sentence, \"tried to \
         allocate\" is not; two words alone, a whole message (\"is misaligned\" after an \
         address), need one such word. A case is matched on the phrases of its one text that \
         shares the most with the pasted one, and on the error's name and what the sizes say \
         where any of its texts holds them. Traceback frames, Python's and compute-sanitizer's, are \
         passed over. In a log, the first error is read as the likely cause, and \
         warnings, information lines and nvidia-smi's table are passed over for it unless they \
         speak of an error; the driver's Xid report is read by its number (Xid 48, a double-bit \
         ECC error), an out-of-memory message by what its sizes say (one request larger than the \
         GPU, a reserve in pieces), and a device after the first (`cuda:1`, `/device:GPU:2`) as \
         a fact of its own, which the cases whose texts name one share. A text that shares no \
         error name or message with any case (a failure told in the user's own words) is matched \
         on the words of the cases' descriptions instead (their names, titles, causes and fixes, \
         and words two of their sources use), and says so: three words or more that at most \
         five cases use anywhere, everyday English (\"since\", \"however\", \"several\") \
         never counting, and a word's endings set aside (\"recursion\" is \"recursive\"). A \
         CUDA call's name keeps its digits (`cudaMemcpy2D`). A known failure first \
         gives exit code 16, no match 15.\n\n\
         {known_list}\
         ## How well it finds the case\n\n\
         Measured {how_well} The eighth test, when the index held what users wrote in words about \
         eight cases, had found 8 of 18 (6 of the 8 with an error string, 2 of the 10 in prose) and \
         8 of 12. A text that describes the failure in words is matched only where it shares a few \
         words in a row with what users wrote about a case; most do not. The ninth test's page \
         lists what changed after it. A first answer is the likeliest reproduced cause, not a \
         diagnosis.\n\n\
         <script id=\"casebook-index\" type=\"application/json\">\n\
         {{{{#include explain/index.json}}}}\n\
         </script>\n\
         <script id=\"casebook-heldout\" type=\"application/json\">\n\
         {{{{#include explain/heldout.json}}}}\n\
         </script>\n\
         <script src=\"explain/explain.js\"></script>\n\
         <script src=\"explain/page.js\"></script>\n",
        known_list = known_failures_section(index),
        how_well = how_well(index, root)?,
    ))
}

/// The failures the index knows but no variant provokes here, each with
/// why and what a user can check.
fn known_failures_section(index: &Index) -> String {
    let mut md = String::from(
        "## Failures it knows but cannot provoke here\n\n\
         An answer names these as not reproduced; each entry's cause comes from the public \
         threads it cites.\n\n",
    );
    for c in index.cases.iter().filter(|c| !c.reproduced) {
        md.push_str(&format!(
            "- **{}**: {} *Why not here:* {} *What to check:* {} ({})\n",
            c.title,
            c.cause,
            c.why_not_here.as_deref().unwrap_or(""),
            c.fix,
            c.reports.join(", ")
        ));
    }
    md.push('\n');
    md
}

/// The index, as JSON with a final newline.
pub fn index_json(index: &Index) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(index)? + "\n")
}

pub fn build(root: &Path, catalog: &[Scenario], report: Option<&Report>) -> anyhow::Result<Index> {
    let run = report.map(|r| RunInfo {
        gpu: r.environment.gpu.clone(),
        driver: r.environment.driver.clone(),
        cuda: r.environment.cuda.clone(),
        pytorch: r.run.pytorch.clone(),
        commit: r.source.commit.clone(),
        date: r.created.get(..10).unwrap_or(&r.created).to_owned(),
    });
    let mut cases = Vec::new();
    for scenario in catalog {
        let mut texts = report.map(|r| run_texts(scenario, r)).unwrap_or_default();
        let pasted = read_pasted(&root.join("scenarios").join(scenario.slug).join(PASTED_TOML))?;
        let mut reports: Vec<String> = scenario.reports.iter().map(|r| r.id.to_owned()).collect();
        for p in pasted {
            if !reports.contains(&p.report) {
                reports.push(p.report.clone());
            }
            texts.push(Text {
                text: p.text.trim().to_owned(),
                from: p.report,
                variant: None,
                versions: p.versions,
            });
        }
        let filter = scenario.slug;
        // A case is reproduced once the committed run has its trials; until
        // then an answer says it is written and waits for its run.
        let ran = report.is_some_and(|r| r.results.iter().any(|e| e.scenario == scenario.slug));
        let waits = (!ran).then(|| {
            if scenario.needs_pair() {
                "written, and not run yet: its trials need two GPUs of one host, and no run on \
                 two GPUs is committed yet"
                    .to_owned()
            } else {
                "written since the committed GPU run, and not run yet".to_owned()
            }
        });
        cases.push(Case {
            scenario: scenario.slug.to_owned(),
            reproduced: ran,
            title: scenario.title.to_owned(),
            cause: scenario.cause.to_owned(),
            fix: scenario.fix.to_owned(),
            page: Some(format!("docs/src/scenarios/{}.md", scenario.slug)),
            book_page: Some(format!("scenarios/{}.html", scenario.slug)),
            run: Some(RunCommands {
                cargo: format!("cargo xtask run-all --filter {filter}"),
                bundle: format!("target/bundle/casebook run-all --filter {filter}"),
            }),
            pytorch: scenario
                .variants
                .iter()
                .any(|v| v.binding == Binding::Pytorch),
            reproduced_on: report.and_then(|r| reproduced_on(scenario, r, run.as_ref()?)),
            reports,
            why_not_here: waits,
            texts,
        });
    }
    for (slug, known) in read_known_failures(root)? {
        cases.push(Case {
            scenario: slug,
            reproduced: false,
            title: known.title,
            cause: known.cause,
            fix: known.check,
            page: None,
            book_page: None,
            run: None,
            pytorch: false,
            reproduced_on: None,
            reports: known.reports,
            why_not_here: Some(known.why_not_here),
            texts: known
                .text
                .into_iter()
                .map(|p| Text {
                    text: p.text.trim().to_owned(),
                    from: p.report,
                    variant: None,
                    versions: p.versions,
                })
                .collect(),
        });
    }
    Ok(Index {
        schema: Index::SCHEMA,
        run,
        matcher: Some(casebook_explain::index::Matcher::of_this_build()),
        cases,
    })
}

/// Where a text of a run was returned: `run on <GPU>, driver …, CUDA …`.
fn machine(gpu: &str, driver: &str, cuda: &str) -> String {
    format!("run on {gpu}, driver {driver}, CUDA {cuda}")
}

/// Where a scenario was reproduced: the full run, or the later run that
/// supplied all its trials (a case that needs two GPUs, which the full run's
/// machine lacked). `None` where the evidence holds none of its trials.
fn reproduced_on(scenario: &Scenario, report: &Report, full: &RunInfo) -> Option<RunInfo> {
    let entries: Vec<&ResultEntry> = report
        .results
        .iter()
        .filter(|e| e.scenario == scenario.slug)
        .collect();
    let first = entries.first()?;
    match &first.from {
        Some(later) if entries.iter().all(|e| e.from.as_ref() == Some(later)) => Some(RunInfo {
            gpu: later.gpu.clone(),
            driver: later.driver.clone(),
            cuda: later.cuda.clone(),
            pytorch: full.pytorch.clone(),
            commit: later.source.commit.clone(),
            date: later.created.get(..10).unwrap_or(&later.created).to_owned(),
        }),
        _ => Some(full.clone()),
    }
}

/// The errors a scenario's variants returned in the run, each once (by what
/// the matcher reads of it): the error's name with the library's sentence,
/// and the device-side assertions the variant printed. A fixed variant's
/// errors are probes it makes on purpose, and a contrast that is a claim's
/// control fails, where it fails, for the other cause it was made to show
/// (an error empty_cache clears, beside a device-side assert): both are
/// left out.
fn run_texts(scenario: &Scenario, report: &Report) -> Vec<Text> {
    let controls: BTreeSet<&str> = scenario
        .claims
        .iter()
        .flat_map(|c| c.control.runs())
        .collect();
    let symptoms = declared_errors(scenario);
    let mut seen: BTreeSet<BTreeSet<String>> = BTreeSet::new();
    let mut out = Vec::new();
    let env = &report.environment;
    let full_run = machine(&env.gpu, &env.driver, &env.cuda);
    for entry in report
        .results
        .iter()
        .filter(|e| e.scenario == scenario.slug)
    {
        let other_cause = entry.role == Role::Contrast && controls.contains(entry.variant.as_str());
        if entry.role == Role::Fixed || other_cause {
            continue;
        }
        // A trial a later run supplied names that run's machine.
        let machine = match &entry.from {
            Some(later) => machine(&later.gpu, &later.driver, &later.cuda),
            None => full_run.clone(),
        };
        let versions = match (&entry.binding, &report.run.pytorch) {
            (Binding::Pytorch, Some(p)) => format!("{machine}, PyTorch {p}"),
            _ => machine,
        };
        let mut add = |text: String| {
            let f = features::features(&text);
            if !f.is_empty() && seen.insert(f) {
                out.push(Text {
                    text,
                    from: "run".to_owned(),
                    variant: Some(entry.variant.clone()),
                    versions: Some(versions.clone()),
                });
            }
        };
        for step in entry.outcome.steps.iter().filter(|s| s.is_error()) {
            if NOT_ERRORS.contains(&step.result.as_str()) {
                continue;
            }
            let text = step_text(&step.result, step.message.as_deref());
            // An error the variant provokes and carries on from (a refusal
            // asked for on purpose, a pointer written after the reset) is
            // the case's symptom only where one of its variants declares it
            // so, or the case's symptoms name it.
            if step.tolerated
                && !symptoms.contains(step.result.as_str())
                && !names_a_symptom(scenario, &text)
            {
                continue;
            }
            add(text);
        }
        for line in entry.outcome.stderr_tail.lines() {
            if features::is_device_assertion(line) {
                add(line.trim().to_owned());
            }
        }
    }
    out
}

/// Whether `text` says one of the case's symptoms ("out of memory").
fn names_a_symptom(scenario: &Scenario, text: &str) -> bool {
    let text = text.to_lowercase();
    scenario
        .symptoms
        .iter()
        .any(|s| text.contains(&s.to_lowercase()))
}

/// The errors the case's variants declare as what they fail with.
fn declared_errors(scenario: &Scenario) -> BTreeSet<&str> {
    scenario
        .variants
        .iter()
        .flat_map(|v| {
            let first = match &v.expect {
                Expect::Fails(s) => Some(s),
                _ => None,
            };
            first.into_iter().chain(&v.then_shows)
        })
        .filter_map(|s| match s {
            Symptom::CudaError(name) => Some(name.as_str()),
            _ => None,
        })
        .collect()
}

/// `cudaErrorIllegalAddress: an illegal memory access was encountered`; a
/// Python message already starts with its exception's name.
fn step_text(result: &str, message: Option<&str>) -> String {
    match message {
        Some(m) => {
            let name = result.split(':').next().unwrap_or(result);
            if m.starts_with(name) {
                m.to_owned()
            } else {
                format!("{result}: {m}")
            }
        }
        None => result.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_reads_as_its_name_and_sentence() {
        assert_eq!(
            step_text(
                "cudaErrorIllegalAddress",
                Some("an illegal memory access was encountered")
            ),
            "cudaErrorIllegalAddress: an illegal memory access was encountered"
        );
        assert_eq!(
            step_text(
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate …",
                Some("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
            ),
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
        );
        assert_eq!(step_text("CUDA_ERROR_ASSERT", None), "CUDA_ERROR_ASSERT");
    }
}
