//! One page per scenario: symptom, claims, cause, code, evidence, detection.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use casebook_model::{Binding, Scenario};
use casebook_report::run::{Report, ResultEntry};
use casebook_report::sanitizer::{Cell, SanitizeReport, error_kinds};

use crate::source::{self, leading_comment};
use crate::words::{
    awaiting_pair_run, awaiting_pair_run_line, claim_row, code_span, error_key, figure, results,
    scenario_symptom_line, symptom_names,
};

pub fn binding_words(binding: Binding) -> &'static str {
    match binding {
        Binding::Cudarc => "Rust, cudarc",
        Binding::CudaRuntimeCpp => "C++, CUDA runtime",
        Binding::Cust => "Rust, cust",
        Binding::Pytorch => "Python, PyTorch",
        Binding::Host => "host only",
    }
}

/// The variants of other cases that return an error this case's broken
/// code shows, by the name each returned (the same error where the name is
/// the same, or the text a user reads: `CUDA_ERROR_ASSERT` and PyTorch's
/// "CUDA error: device-side assert triggered"), from the run's report.
/// Fixed variants, whose errors are not the failure, are left out.
pub fn also_reproduced_by<'a>(
    scenario: &Scenario,
    report: Option<&'a Report>,
) -> Vec<(&'a str, Vec<&'a ResultEntry>)> {
    let own = symptom_names(scenario, report);
    let keys: BTreeSet<&str> = own.iter().map(|n| error_key(n)).collect();
    let mut by_name: BTreeMap<&str, Vec<&ResultEntry>> = BTreeMap::new();
    for r in report.into_iter().flat_map(|r| r.results.iter()) {
        if r.scenario == scenario.slug || r.role == casebook_model::Role::Fixed {
            continue;
        }
        let names: BTreeSet<&str> = r
            .outcome
            .steps
            .iter()
            .filter(|s| s.is_error() && keys.contains(error_key(&s.result)))
            .map(|s| s.result.as_str())
            .collect();
        for name in names {
            by_name.entry(name).or_default().push(r);
        }
    }
    let mut found: Vec<_> = by_name.into_iter().collect();
    // The runs of each text by case and variant, not by where the evidence
    // files hold them (a full run's record, or a later run's).
    for (_, runs) in &mut found {
        runs.sort_by_key(|r| (r.scenario.as_str(), r.variant.as_str()));
    }
    // A text this page does not show otherwise (PyTorch's, say) first, in
    // the order of the errors it stands for.
    found.sort_by_key(|(name, _)| {
        (
            own.iter().any(|n| n == name),
            own.iter().position(|n| error_key(n) == error_key(name)),
            *name,
        )
    });
    found
}

/// The lines that send a reader to the other cases that reproduce this
/// case's error; nothing where none does.
fn also_reproduced_section(md: &mut String, scenario: &Scenario, report: Option<&Report>) {
    let found = also_reproduced_by(scenario, report);
    if found.is_empty() {
        return;
    }
    md.push_str("**Also reproduced by** other cases, whose variants return the same error:\n\n");
    for (name, entries) in found {
        let mut by_case: BTreeMap<&str, Vec<&ResultEntry>> = BTreeMap::new();
        for r in entries {
            by_case.entry(r.scenario.as_str()).or_default().push(r);
        }
        let cases: Vec<String> = by_case
            .into_iter()
            .map(|(slug, variants)| {
                let mut by_binding: Vec<(&str, Vec<String>)> = Vec::new();
                for r in variants {
                    let words = binding_words(r.binding);
                    let link = format!(
                        "[{}]({slug}.md#{})",
                        code_span(&r.variant),
                        variant_anchor(&r.variant)
                    );
                    match by_binding.iter_mut().find(|(b, _)| *b == words) {
                        Some((_, names)) => names.push(link),
                        None => by_binding.push((words, vec![link])),
                    }
                }
                let variants: Vec<String> = by_binding
                    .into_iter()
                    .map(|(words, names)| format!("{} ({words})", names.join(", ")))
                    .collect();
                format!("[{slug}]({slug}.md): {}", variants.join(", "))
            })
            .collect();
        let _ = writeln!(md, "- {}: {}", code_span(name), cases.join("; "));
    }
    md.push('\n');
}

/// The code mdBook's `{{#include file:anchor}}` would put in the page, read
/// here so that the page carries it: a repository host shows a page's
/// markdown as it is, where an include line shows no code. As mdBook does:
/// the lines between `ANCHOR: anchor` and `ANCHOR_END: anchor`, less every
/// other anchor's marker lines, or, without an anchor, the whole file less
/// every marker line; the lines joined without a final newline.
fn included(root: &Path, file: &str, anchor: Option<&str>) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(root.join(file))
        .map_err(|e| anyhow::anyhow!("reading {file}: {e}"))?;
    let Some(anchor) = anchor else {
        // The whole file, less the anchors' marker lines, which say nothing
        // to a reader.
        return Ok(text
            .lines()
            .filter(|l| {
                anchor_name(l, "ANCHOR:").is_none() && anchor_name(l, "ANCHOR_END:").is_none()
            })
            .collect::<Vec<_>>()
            .join("\n"));
    };
    let mut kept = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if !inside {
            inside = anchor_name(line, "ANCHOR:") == Some(anchor);
            continue;
        }
        match anchor_name(line, "ANCHOR_END:") {
            Some(name) if name == anchor => break,
            Some(_) => {}
            None if anchor_name(line, "ANCHOR:").is_none() => kept.push(line),
            None => {}
        }
    }
    Ok(kept.join("\n"))
}

/// The page anchor of a variant's section: `variant-device-assert-py`.
pub(crate) fn variant_anchor(name: &str) -> String {
    format!("variant-{name}")
}

/// The anchor a line marks with `marker` (`ANCHOR:` or `ANCHOR_END:`),
/// read as mdBook reads it: after the marker and any blanks, the longest
/// run of word characters and `-`.
fn anchor_name<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    let rest = line[line.find(marker)? + marker.len()..].trim_start();
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

fn lib_doc(root: &Path, slug: &str) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(root.join(format!("scenarios/{slug}/src/lib.rs")))?;
    Ok(leading_comment(&text, "//!"))
}

pub fn scenario_page(
    root: &Path,
    scenario: &Scenario,
    report: Option<&Report>,
    sanitize: &Sanitized,
    plots: &[&String],
) -> anyhow::Result<String> {
    let slug = scenario.slug;
    let mut md = String::new();
    let _ = writeln!(md, "# {}\n", scenario.title);
    let _ = writeln!(
        md,
        "**Symptom:** {}.\n",
        scenario_symptom_line(scenario, report)
    );
    also_reproduced_section(&mut md, scenario, report);
    let _ = writeln!(md, "{}\n", lib_doc(root, slug)?);
    let _ = writeln!(md, "**The real cause.** {}\n", scenario.cause);
    reports_section(&mut md, scenario);

    md.push_str("## What was claimed\n\n");
    if scenario.claims.is_empty() {
        md.push_str("This scenario tests no published sentence directly.\n\n");
    } else {
        md.push_str(
            "| Verdict, measured | Claim | Source | Decided by | Control: the same judge on another run |\n\
             |---|---|---|---|---|\n",
        );
        for claim in scenario.claims {
            let decided_by = format!("`{}`", claim.judged_by);
            let _ = writeln!(md, "{}", claim_row(report, scenario, claim, &decided_by));
        }
        md.push('\n');
    }

    md.push_str("## The code\n\n");
    md.push_str("Each variant below ran as shown, in a process of its own.\n\n");
    let mut described = BTreeSet::new();
    let mut whole_shown = BTreeSet::new();
    for variant in &scenario.variants {
        let src = source::locate(root, scenario, variant)?;
        // A short anchor per variant, for links from other pages.
        let _ = writeln!(md, "<a id=\"{}\"></a>\n", variant_anchor(variant.name));
        let _ = writeln!(
            md,
            "### `{}` ({}): expected {}\n",
            variant.name,
            binding_words(variant.binding),
            variant.expect
        );
        // A file shared by several variants is described once.
        if !src.doc.is_empty() && described.insert(src.file.clone()) {
            let _ = writeln!(md, "{}\n", src.doc);
        }
        if let Some(what) = variant.also_differs {
            let _ = writeln!(md, "**Besides the fix, this variant differs:** {what}\n");
        }
        if let Some(change) = variant.one_change {
            let lines = |sign: char, text: &str| {
                text.lines()
                    .map(|l| format!("{sign} {}", l.trim()))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let _ = writeln!(
                md,
                "**One change from [`{from}`](#{anchor}): {parameter}.** \
                 Nothing else differs:\n\n```diff\n{was}\n{is}\n```\n",
                from = change.from,
                anchor = variant_anchor(change.from),
                parameter = change.parameter,
                was = lines('-', change.was),
                is = lines('+', change.is),
            );
        }
        let _ = writeln!(
            md,
            "```{}\n{}\n```\n",
            src.language,
            included(root, &src.file, src.anchor.as_deref())?
        );
        let _ = writeln!(md, "<small>Source: `{}`</small>\n", src.file);
        // A Python file's helpers are in the file itself: shown once, whole.
        if variant.binding == Binding::Pytorch && whole_shown.insert(src.file.clone()) {
            let _ = writeln!(
                md,
                "<details><summary>The whole file: <code>{}</code></summary>\n\n```python\n{}\n```\n\n</details>\n",
                src.file,
                included(root, &src.file, None)?
            );
        }
    }
    let shared = format!("scenarios/{slug}/src/lib.rs");
    let _ = writeln!(
        md,
        "<details><summary>What the variants share: <code>{shared}</code></summary>\n\n```rust\n{}\n```\n\n</details>\n",
        included(root, &shared, None)?
    );

    md.push_str("## Evidence\n\n");
    match report {
        None => md.push_str(
            "No GPU run is recorded yet: run `cargo xtask run-all` on a GPU machine.\n\n",
        ),
        Some(r) => {
            let e = &r.environment;
            let _ = writeln!(
                md,
                "From the run of {} on an {} (compute {}), driver {}, CUDA {}, kernels built by toolkit {}.\n",
                r.created, e.gpu, e.compute_capability, e.driver, e.cuda, e.toolkit
            );
            if let Some(torch) = &r.run.pytorch
                && scenario.variants.iter().any(|v| v.needs_torch())
            {
                let _ = writeln!(md, "The PyTorch variants ran under PyTorch {torch}.\n");
            }
            if results(report, slug).next().is_some() {
                md.push_str(
                    "| variant | expected | observed | verdict | time |\n|---|---|---|---|---|\n",
                );
            } else {
                md.push_str("None of this case's variants is in that run.\n");
            }
            for res in results(report, slug) {
                let _ = writeln!(
                    md,
                    "| `{}` | {} | {} | {:?} | {:.2} s |",
                    res.variant,
                    plain(&res.expected),
                    plain(&res.observed),
                    res.verdict,
                    res.seconds
                );
            }
            for res in results(report, slug) {
                if let Some(run) = &res.from {
                    let on = if run.gpu.is_empty() {
                        String::new()
                    } else {
                        format!("{}; ", run.gpu)
                    };
                    let how = if res.pair_gpu.is_some() {
                        format!(
                            "on two GPUs of one host ({on}a pair trial, which a run that sees \
                             one GPU skips)"
                        )
                    } else {
                        format!("again, in a run of some trials ({on}not a full run)")
                    };
                    // Both times are RFC 3339 in UTC, which sort as text.
                    let when = if run.created.as_str() < r.created.as_str() {
                        "before that run, which did not run it"
                    } else {
                        "after that run"
                    };
                    let _ = writeln!(
                        md,
                        "\n`{}` ran {when}, {how}, at {} ({}, `{}`): its row, \
                         figures, snapshot and claims are from there.",
                        res.variant,
                        run.source.short(),
                        run.created,
                        run.file
                    );
                }
            }
            if results(report, slug).any(|r| !r.outcome.measures.is_empty()) {
                md.push_str(
                    "\nRaw figures (they differ between GPUs, so they are not in the snapshots):\n\n",
                );
            }
            for res in results(report, slug) {
                let figures: Vec<String> = res
                    .outcome
                    .measures
                    .iter()
                    .map(|(k, m)| format!("{} = {}", code_span(k), figure(m.value, m.unit)))
                    .collect();
                if !figures.is_empty() {
                    let _ = writeln!(md, "- `{}`: {}", res.variant, figures.join("; "));
                }
            }
            md.push('\n');
        }
    }
    let awaiting = awaiting_pair_run(scenario, report);
    if !awaiting.is_empty() {
        let _ = writeln!(md, "{}\n", awaiting_pair_run_line(&awaiting));
    }
    for name in plots {
        let _ = writeln!(md, "![{name}](../plots/{name})\n");
    }
    let _ = writeln!(
        md,
        "The hardware-independent outcome of each variant is snapshotted in `scenarios/{slug}/snapshots/`.\n"
    );

    md.push_str("## Detection\n\n");
    detection(&mut md, scenario, sanitize);
    md.push_str("## Run it\n\n");
    if scenario.needs_pair() {
        md.push_str(
            "On a machine with two GPUs, both visible: its trials need a pair, and where fewer \
             are visible they are skipped with the reason.\n\n",
        );
    }
    let _ = writeln!(md, "```sh\ncargo xtask run-all --filter {slug}\n```");
    Ok(md)
}

/// What compute-sanitizer's passes recorded, as the pages read it: the
/// committed matrix, and the passes of a few cases' variants alone
/// (`docs/evidence/sanitize-subset-*.json`, each with its file), for the cases
/// the matrix predates.
pub struct Sanitized {
    pub matrix: Option<SanitizeReport>,
    pub passes: Vec<(String, SanitizeReport)>,
}

impl Sanitized {
    /// The report that holds `slug`'s cells: the matrix where it has them,
    /// or else the newest pass that does, with its file.
    fn for_case(&self, slug: &str) -> Option<(Option<&str>, &SanitizeReport)> {
        let holds = |r: &SanitizeReport| r.cells.iter().any(|c| c.scenario == slug);
        if let Some(matrix) = self.matrix.as_ref().filter(|r| holds(r)) {
            return Some((None, matrix));
        }
        self.passes
            .iter()
            .filter(|(_, r)| holds(r))
            .max_by(|(_, a), (_, b)| a.created.cmp(&b.created))
            .map(|(file, r)| (Some(file.as_str()), r))
    }
}

fn detection(md: &mut String, scenario: &Scenario, sanitize: &Sanitized) {
    let Some((file, report)) = sanitize.for_case(scenario.slug) else {
        md.push_str(
            "Which of compute-sanitizer's tools flag this bug is not measured yet: `cargo xtask sanitize` \
             on a GPU machine records it here.\n\n",
        );
        return;
    };
    let cells: Vec<_> = report
        .cells
        .iter()
        .filter(|c| c.scenario == scenario.slug)
        .collect();
    let tools: Vec<&str> = casebook_report::sanitizer::tool_names().collect();
    match file {
        None => {
            let _ = writeln!(md, "{}, run of {}:\n", report.sanitizer, report.created);
        }
        Some(file) => {
            let _ = writeln!(
                md,
                "{}, run of {}, in a pass of this case's variants alone (`{file}`): the committed \
                 matrix predates the case.\n",
                report.sanitizer, report.created
            );
        }
    }
    let _ = writeln!(
        md,
        "| variant | {} |\n|---|{}",
        tools.join(" | "),
        "---|".repeat(tools.len())
    );
    for v in &scenario.variants {
        let marks: Vec<String> = tools
            .iter()
            .map(
                |t| match cells.iter().find(|c| c.variant == v.name && c.tool == *t) {
                    None => "not run".to_owned(),
                    Some(c) if c.timed_out => "timed out".to_owned(),
                    Some(c) if c.missed(v.role) => "**missed**".to_owned(),
                    Some(c) if !c.flagged => "clean".to_owned(),
                    Some(c) => format!(
                        "flagged: {}",
                        c.kinds
                            .iter()
                            .map(|k| kind_as_printed(k, c, &cells, &report.cells))
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                },
            )
            .collect();
        let reduced = if cells.iter().any(|c| c.variant == v.name && c.reduced) {
            " (reduced form)"
        } else {
            ""
        };
        let _ = writeln!(md, "| `{}`{reduced} | {} |", v.name, marks.join(" | "));
    }
    let _ = writeln!(
        md,
        "\n**missed** marks a broken variant that a tool does not catch: a blind spot of that tool for this bug. \
         Run it: `cargo xtask sanitize --filter {}`.\n",
        scenario.slug
    );
}

/// A kind of report in a table cell, as the tool printed it. The cell's
/// kinds have their figures taken out, so that runs compare; the page shows
/// the report's first line from the log, figures included (an address at
/// its end left out), found in this cell's log, else in another cell's of
/// the same variant, else of the same scenario, where a log's kept tail was
/// cut before it. Where none kept it, the line of another scenario's report
/// of that kind shows where the figures stood, each as `…`.
fn kind_as_printed(kind: &str, cell: &Cell, scenario: &[&Cell], all: &[Cell]) -> String {
    if let Some(name) = kind.strip_prefix("API error ") {
        return format!("API error {}", code_span(name));
    }
    if kind == "leaked allocation" {
        return kind.to_owned();
    }
    let first_line = |cells: &mut dyn Iterator<Item = &Cell>| {
        cells
            .flat_map(|c| c.log_tail.lines())
            .filter_map(|line| line.strip_prefix("========= "))
            .find(|line| {
                error_kinds(&format!("========= {line}"))
                    .iter()
                    .any(|k| k == kind)
            })
            .map(|line| match line.trim_end().rsplit_once(" at ") {
                Some((head, address)) if address.starts_with("0x") => head.to_owned(),
                _ => line.trim_end().to_owned(),
            })
    };
    let own = first_line(
        &mut std::iter::once(cell)
            .chain(
                scenario
                    .iter()
                    .copied()
                    .filter(|c| c.variant == cell.variant),
            )
            .chain(
                scenario
                    .iter()
                    .copied()
                    .filter(|c| c.variant != cell.variant),
            ),
    );
    let printed = own
        .or_else(|| {
            first_line(&mut all.iter()).map(|line| {
                line.split(' ')
                    .map(|w| {
                        if w.starts_with("0x") || w.starts_with(|c: char| c.is_ascii_digit()) {
                            "…"
                        } else {
                            w
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
        })
        .unwrap_or_else(|| kind.to_owned());
    code_span(&printed).replace('|', "\\|")
}

/// Text read from a record (an outcome, a report), escaped so that markdown
/// shows it as it is: `*`, `__global__` and the rest are never emphasis,
/// code or a table's column. An underscore inside a word (`CUDA_ERROR_…`),
/// which markdown never reads as emphasis, is left as it is.
pub fn plain(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &ch) in chars.iter().enumerate() {
        let inside_word = ch == '_'
            && i > 0
            && chars[i - 1].is_alphanumeric()
            && chars.get(i + 1).is_some_and(|c| c.is_alphanumeric());
        if matches!(
            ch,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#'
        ) && !inside_word
        {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// The public reports a scenario reproduces, each linked, with what it
/// shows; nothing where it names none.
fn reports_section(md: &mut String, scenario: &Scenario) {
    if scenario.reports.is_empty() {
        return;
    }
    md.push_str("## Reported in\n\n");
    for r in scenario.reports {
        match r.url() {
            Some(url) => {
                let _ = writeln!(md, "- [{}]({url}): {}", r.id, r.shows);
            }
            None => {
                let _ = writeln!(md, "- {}: {}", r.id, r.shows);
            }
        }
    }
    md.push('\n');
}

/// The scenario folder's README: where to read it, and what is in it.
pub fn scenario_readme(root: &Path, scenario: &Scenario) -> anyhow::Result<String> {
    let slug = scenario.slug;
    let mut md = String::new();
    let _ = writeln!(md, "# {slug}: {}\n", scenario.title);
    let _ = writeln!(md, "{}\n", lib_doc(root, slug)?);
    let _ = writeln!(md, "**The real cause.** {}\n", scenario.cause);
    reports_section(&mut md, scenario);
    md.push_str("| variant | code | expected |\n|---|---|---|\n");
    for v in &scenario.variants {
        let src = source::locate(root, scenario, v)?;
        let at = src
            .anchor
            .map(|a| format!(" (anchor `{a}`)"))
            .unwrap_or_default();
        let _ = writeln!(
            md,
            "| `{}` | `{}`{at} | {} |",
            v.name,
            src.file,
            v.expected_text()
        );
    }
    let _ = writeln!(
        md,
        "\nThe cookbook page, with the claims, the evidence and the plots: `docs/src/scenarios/{slug}.md`. \
         Snapshots: `snapshots/`. Run it: `cargo xtask run-all --filter {slug}`.\n\n\
         <!-- Generated by `cargo xtask docs` from the scenario's declaration and sources. -->"
    );
    Ok(md)
}

#[cfg(test)]
mod sanitizer_text_tests {
    use super::*;

    fn cell(scenario: &str, variant: &str, tool: &str, kinds: &[&str], log: &str) -> Cell {
        serde_json::from_value(serde_json::json!({
            "scenario": scenario, "variant": variant, "tool": tool, "flagged": true,
            "timed_out": false, "kinds": kinds, "leaked_bytes": null, "reduced": false,
            "provokes": false, "judgement": "caught", "passed": true, "seconds": 1.0,
            "exit_code": 1, "log_tail": log,
        }))
        .unwrap()
    }

    const WRITE: &str = "Invalid __global__ write of size bytes";

    #[test]
    fn a_report_is_shown_with_its_figures_as_the_tool_printed_it() {
        let printed =
            "========= Invalid __global__ write of size 4 bytes\n=========     at k+0x10\n";
        let own = cell("s", "broken", "memcheck", &[WRITE], printed);
        let cut = cell(
            "s",
            "broken",
            "racecheck",
            &[WRITE],
            "=========   Host Frame: x\n",
        );
        let all = [own.clone(), cut.clone()];
        let cells: Vec<&Cell> = all.iter().collect();
        assert_eq!(
            kind_as_printed(WRITE, &own, &cells, &all),
            "`Invalid __global__ write of size 4 bytes`"
        );
        // A log whose kept tail lost the line: another cell of the variant has it.
        assert_eq!(
            kind_as_printed(WRITE, &cut, &cells, &all),
            "`Invalid __global__ write of size 4 bytes`"
        );
        assert_eq!(
            kind_as_printed("API error CUDA_ERROR_LAUNCH_FAILED", &own, &cells, &all),
            "API error `CUDA_ERROR_LAUNCH_FAILED`"
        );
        // No log of this scenario kept it: another scenario's line shows
        // where the figure stood, never its value.
        let elsewhere = cell(
            "t",
            "broken",
            "memcheck",
            &[WRITE],
            "=========   Host Frame: x\n",
        );
        let mine = [elsewhere.clone()];
        assert_eq!(
            kind_as_printed(WRITE, &elsewhere, &mine.iter().collect::<Vec<_>>(), &all),
            "`Invalid __global__ write of size … bytes`"
        );
        assert_eq!(
            kind_as_printed("Warp assert", &elsewhere, &[], &[]),
            "`Warp assert`"
        );
    }

    #[test]
    fn recorded_text_is_never_read_as_markdown() {
        assert_eq!(plain("__global__ *p"), "\\_\\_global\\_\\_ \\*p");
        assert_eq!(
            plain("CUDA_ERROR_OUT_OF_MEMORY"),
            "CUDA_ERROR_OUT_OF_MEMORY"
        );
        assert_eq!(plain("a | b"), "a \\| b");
        assert_eq!(code_span("__global__"), "`__global__`");
        assert_eq!(code_span("a`b"), "``a`b``");
    }
}

#[cfg(test)]
mod include_tests {
    use super::included;

    #[test]
    fn the_code_is_read_as_mdbook_includes_it() {
        let dir = std::env::temp_dir().join(format!("cookbook-include-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = "fn a() {}\n// ANCHOR: outer\nfn b() {}\n// ANCHOR: inner\nfn c() {}\n\
                    // ANCHOR_END: inner\n// ANCHOR_END: outer\nfn d() {}\n";
        std::fs::write(dir.join("x.rs"), text).unwrap();
        let read = |anchor| included(&dir, "x.rs", anchor).unwrap();
        // Another anchor's markers are left out; the text has no final newline.
        assert_eq!(read(Some("outer")), "fn b() {}\nfn c() {}");
        assert_eq!(read(Some("inner")), "fn c() {}");
        // The whole file, less the markers, which mdBook's whole-file
        // include would show and which say nothing to a reader.
        assert_eq!(read(None), "fn a() {}\nfn b() {}\nfn c() {}\nfn d() {}");
        assert_eq!(read(Some("absent")), "");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod also_reproduced_tests {
    use std::path::Path;

    use super::*;
    use crate::words::symptom_tests::scenario;

    #[test]
    fn the_committed_run_sends_device_assert_to_its_pytorch_variants() {
        // The committed evidence as the book reads it: the newest full run,
        // completed by the runs since (a stopped run's rest among them).
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let Some(report) = casebook_report::run::evidence(&root).unwrap() else {
            return;
        };
        let mut s = scenario(&["device-side assert triggered"]);
        s.slug = "device-assert";
        let found = also_reproduced_by(&s, Some(&report));
        let (first, variants) = &found[0];
        assert_eq!(
            *first,
            "torch.AcceleratorError: CUDA error: device-side assert triggered"
        );
        let names: Vec<&str> = variants.iter().map(|r| r.variant.as_str()).collect();
        // cnn-after-fault-py no longer records the synchronise after the
        // assert, whose words changed from run to run.
        assert_eq!(names, ["device-assert-py", "launch-blocking-py"]);
    }
}

#[cfg(test)]
mod detection_tests {
    use super::*;

    /// A committed pass with its `created` and its cells' cases replaced:
    /// one cell of each of `slugs`, copied from its first cell.
    fn report(created: &str, slugs: &[&str]) -> SanitizeReport {
        let mut value: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../../docs/evidence/sanitize-subset-h100-00efb08.json"),
            )
            .unwrap(),
        )
        .unwrap();
        let cell = value["cells"][0].clone();
        let cells: Vec<serde_json::Value> = slugs
            .iter()
            .map(|slug| {
                let mut c = cell.clone();
                c["scenario"] = (*slug).into();
                c
            })
            .collect();
        value["created"] = created.into();
        value["cells"] = cells.into();
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_case_the_matrix_predates_is_read_from_its_newest_pass() {
        let sanitized = Sanitized {
            matrix: Some(report("2026-01-01T00:00:00Z", &["old-case"])),
            passes: vec![
                (
                    "a-newer.json".into(),
                    report("2026-03-01T00:00:00Z", &["new-case"]),
                ),
                (
                    "b-older.json".into(),
                    report("2026-02-01T00:00:00Z", &["new-case", "old-case"]),
                ),
            ],
        };
        // The matrix wins where it holds the case, even beside a newer pass.
        assert_eq!(sanitized.for_case("old-case").unwrap().0, None);
        // Else the newest pass that holds it, by when it ran, not by its name.
        assert_eq!(
            sanitized.for_case("new-case").unwrap().0,
            Some("a-newer.json")
        );
        assert!(sanitized.for_case("no-case").is_none());
        let mut md = String::new();
        detection(
            &mut md,
            &crate::words::symptom_tests::scenario(&[]),
            &sanitized,
        );
        assert!(md.contains("not measured yet"), "{md}");
    }
}
