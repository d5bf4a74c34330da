//! The front matter: contents, introduction, index by symptom, claims, running.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use casebook_model::ledger::{Undecided, Why};
use casebook_model::{Scenario, Source};
use casebook_report::Verdict;
use casebook_report::run::Report;

use crate::words::{
    claim_row, control_verdict_of, results, scenario_symptom_line, seed_cell, symptom_line,
    symptom_names, verdict_of,
};

pub fn summary(catalog: &[Scenario]) -> String {
    let mut md = String::from(
        "# Summary\n\n[Paste your error](paste-your-error.md)\n[Introduction](introduction.md)\n\n- [What users paste](what-users-paste.md)\n- [Index by symptom](symptoms.md)\n- [Claims of the articles](claims.md)\n  - [How the verdicts changed](ledger-history.md)\n- [cudarc and cust, side by side](bindings.md)\n- [How to run it](running.md)\n  - [Running it: the details](operations.md)\n- [The same failures on other GPUs](fleet.md)\n\n# Scenarios\n\n",
    );
    for s in catalog {
        let _ = writeln!(md, "- [{}](scenarios/{}.md)", s.slug, s.slug);
    }
    md
}

pub fn introduction(catalog: &[Scenario], report: Option<&Report>) -> String {
    let mut md = String::from(
        "# cuda-casebook\n\nThe ways CUDA programs fail, reproduced on a real GPU next to their fixes. Each page \
         takes one failure, from an article or from the errors users report in public issue \
         trackers, shows the broken code and the fixed code that ran, and the evidence: what each \
         variant did on the GPU, and whether the claims made about it (the articles', NVIDIA's) \
         held.\n\n\
         A **case** is one failure; its **variants** are the broken program, the fixed one and \
         sometimes the article's code as printed or a third way; each variant's run on a GPU, in \
         a process of its own, is a **trial**. The first cases came from five articles, the \
         **seeds**.\n\n\
         **Got a CUDA error?** Paste it, traceback and all, into [Paste your error](paste-your-error.md), \
         or into `casebook explain` on the command line: either names the case that reproduces it.\n\n",
    );
    match report {
        Some(r) => {
            let _ = writeln!(
                md,
                "The latest run: {} on an {}, driver {} (CUDA {}), built from commit {}: {} of {} \
                 trials as declared.\n",
                r.created,
                r.environment.gpu,
                r.environment.driver,
                r.environment.cuda,
                source_text(&r.source),
                r.summary.passed,
                r.summary.trials
            );
        }
        None => md.push_str("No GPU run is recorded yet.\n\n"),
    }
    md.push_str("| scenario | symptom | variants | all as declared |\n|---|---|---|---|\n");
    for s in catalog {
        let runs: Vec<_> = results(report, s.slug).collect();
        let state = if runs.is_empty() {
            "not run"
        } else if runs.len() == s.variants.len() && runs.iter().all(|r| r.verdict == Verdict::Pass)
        {
            "yes"
        } else {
            "NO"
        };
        let _ = writeln!(
            md,
            "| [{}](scenarios/{}.md) | {} | {} | {state} |",
            s.slug,
            s.slug,
            s.title,
            s.variants.len()
        );
    }
    md
}

pub fn symptoms(catalog: &[Scenario], report: Option<&Report>) -> String {
    let mut groups: BTreeMap<&str, Vec<&Scenario>> = BTreeMap::new();
    for s in catalog {
        for heading in s.symptoms {
            groups.entry(heading).or_default().push(s);
        }
    }
    let mut md = String::from(
        "# Index by symptom\n\nFind what you are seeing; each entry is a page with the cause and the fix.\n\n",
    );
    for (heading, scenarios) in groups {
        let _ = writeln!(md, "## {}{}\n", heading[..1].to_uppercase(), &heading[1..]);
        for s in scenarios {
            let _ = writeln!(
                md,
                "- [{}](scenarios/{}.md): {}",
                s.title,
                s.slug,
                scenario_symptom_line(s, report)
            );
        }
        md.push('\n');
    }
    md.push_str(&by_error_text(catalog, report));
    md
}

/// The same index by the exact error a program printed: the driver's and
/// the runtime's error names, and the texts PyTorch raises, each with the
/// pages where a broken variant shows it.
fn by_error_text(catalog: &[Scenario], report: Option<&Report>) -> String {
    let mut by_name: BTreeMap<String, Vec<&Scenario>> = BTreeMap::new();
    for s in catalog {
        for name in symptom_names(s, report) {
            by_name.entry(name).or_default().push(s);
        }
    }
    let mut md = String::from(
        "## By the exact error text

As the program printed it: the driver's and the runtime's error \
         names, and what PyTorch raises (cut before the first figure, which differs from GPU to GPU).\n\n\
         | error | pages |\n|---|---|\n",
    );
    for (name, scenarios) in by_name {
        let pages = scenarios
            .iter()
            .map(|s| format!("[{}](scenarios/{}.md)", s.slug, s.slug))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            md,
            "| {} | {pages} |",
            symptom_line(&[name]).replace('|', "\\|")
        );
    }
    md.push('\n');
    md
}

/// A control as data, for `docs/claims.json`.
fn control_json(
    report: Option<&Report>,
    s: &Scenario,
    c: &casebook_model::Claim,
    control: casebook_model::Control,
    entry: &mut serde_json::Value,
) {
    match control {
        casebook_model::Control::Run(v) => {
            entry["control"] = v.into();
            if let Some(verdict) = control_verdict_of(report, s, c, v) {
                entry["control_verdict"] = verdict.into();
            }
        }
        casebook_model::Control::Impossible(why) => entry["no_control"] = why.into(),
        casebook_model::Control::Pending => entry["control"] = "none yet".into(),
        casebook_model::Control::Parts(parts) => {
            let parts: Vec<serde_json::Value> = parts
                .iter()
                .map(|p| {
                    let mut part = serde_json::json!({ "part": p.part });
                    control_json(report, s, c, p.control, &mut part);
                    part
                })
                .collect();
            entry["controls_by_part"] = parts.into();
        }
    }
}

/// The claims ledger as data: every claim of the seeds, decided or not.
pub fn ledger_json(
    catalog: &[Scenario],
    undecided: &[Undecided],
    report: Option<&Report>,
) -> String {
    let mut entries = Vec::new();
    for s in catalog {
        for c in s.claims {
            let mut entry = serde_json::json!({
                "id": c.id, "quote": c.quote, "status": "tested",
                "scenario": s.slug, "variant": c.judged_by, "verdict": verdict_of(report, s, c),
            });
            match c.source {
                Source::Seed(file) => entry["seed"] = file.into(),
                Source::Nvidia(p) | Source::Pytorch(p) => {
                    entry["source"] = serde_json::json!({
                        "document": p.document, "section": p.section, "url": p.url,
                    })
                }
            }
            if let Some(why) = c.reach.cap() {
                entry["at_best_partly"] = why.into();
            }
            control_json(report, s, c, c.control, &mut entry);
            entries.push(entry);
        }
    }
    for u in undecided {
        let (status, reason) = why_words(u.why);
        entries.push(serde_json::json!({
            "id": u.id, "seed": u.seed, "quote": u.quote, "status": status, "reason": reason,
        }));
    }
    entries.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    serde_json::to_string_pretty(&entries).unwrap_or_default() + "\n"
}

fn why_words(why: Why) -> (&'static str, &'static str) {
    match why {
        Why::Untestable(r) => ("untestable", r),
        Why::NotYetTested(r) => ("not yet tested", r),
    }
}

pub fn claims(catalog: &[Scenario], undecided: &[Undecided], report: Option<&Report>) -> String {
    let mut md = String::from(
        "# Claims of the articles\n\nEvery sentence from the seed articles or NVIDIA's documentation that a scenario tests, with the \
         verdict its run computed. A claim is read with its hedges and conditions (\"can\" asks whether the \
         effect happens at all). A CPU test feeds every judge its run's outcome changed in what it reads (each \
         yes/no flipped, each figure scaled, the failed calls removed) and fails unless the judge can come out \
         either way. Where a run can test only part of a sentence, the claim says so as data: \"at best partly\", \
         with the reason. Beside each verdict, its control: another run of the same scenario (the bug \
         fixed, or the one thing the claim turns on changed) and what the claim's own judge reads in its \
         recorded outcome, which a CPU test requires to be the other answer. A verdict of \"partly\" \
         gives each part its own control; where no control can exist the cell says why, and a claim \
         whose control is still to be written says so. Every verdict that changed, and why: [How the \
         verdicts changed](ledger-history.md).\n\n| verdict | claim | source | tested by | control |\n|---|---|---|---|---|\n",
    );
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in catalog {
        for c in s.claims {
            *counts.entry(verdict_of(report, s, c)).or_default() += 1;
            let decided_by = format!("[{}](scenarios/{}.md) `{}`", s.slug, s.slug, c.judged_by);
            let _ = writeln!(md, "{}", claim_row(report, s, c, &decided_by));
        }
    }
    md.push_str(
        "\n## Claims no scenario decides\n\n| verdict | claim | source | why |\n|---|---|---|---|\n",
    );
    for u in undecided {
        let (status, reason) = why_words(u.why);
        *counts.entry(status).or_default() += 1;
        let _ = writeln!(
            md,
            "| **{status}** | \"{}\"<br><small>`{}`</small> | {} | {} |",
            u.quote.replace('|', "\\|"),
            u.id,
            seed_cell(u.seed),
            reason.replace('|', "\\|")
        );
    }
    let totals: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let _ = writeln!(
        md,
        "\nIn all, {} claims: {}. The same ledger as data: `docs/claims.json`.",
        counts.values().sum::<usize>(),
        totals.join(", ")
    );
    md
}

/// Where the committed bench of the schedule on several GPUs lies.
pub const BENCH_FILE: &str = "docs/evidence/h200x2-bench.json";

/// Which run a report is, in words: its day and the commit it was built
/// from, so that its counts read as that run's.
fn run_words(r: &Report) -> String {
    format!(
        "of {} built from commit {}",
        r.created.get(..10).unwrap_or(&r.created),
        source_text(&r.source)
    )
}

/// How the latest run's count of trials compares, for a count of an
/// older run: nothing where they are the same run or count.
fn against_latest(trials: usize, latest: Option<&Report>, same_run: bool) -> String {
    match latest {
        Some(l) if !same_run && l.summary.trials != trials => format!(
            "; the latest run, {}, has {}",
            run_words(l),
            l.summary.trials
        ),
        _ => String::new(),
    }
}

/// The "How fast" section of one bench, from `file`.
fn bench_section(
    r: &Report,
    b: &casebook_report::bench::Bench,
    file: &str,
    latest: Option<&Report>,
) -> String {
    let mut md = String::new();
    let several = b.gpus.len() > 1;
    let _ = write!(
        md,
        "\n## How fast{}\n\nThe bench {} on {}, from {file}, with {} trials (the catalogue \
         as it was then{}):\n\n\
         | | seconds |\n|---|---|\n\
         | {} | {:.1} |\n\
         | default schedule, {} side by side on each of {} GPU(s) | {:.1} |\n\
         | critical path: the exclusive trials plus the longest shared one{} | {:.1} |\n\
         | wall time / critical path (`critical_path_ratio`) | {:.2} |\n",
        if several { " on several GPUs" } else { "" },
        run_words(r),
        r.environment.gpu,
        b.trials.len(),
        against_latest(
            b.trials.len(),
            latest,
            latest.is_some_and(|l| l.created == r.created)
        ),
        if b.baseline.is_empty() {
            "one trial at a time"
        } else {
            &b.baseline
        },
        b.baseline_wall_seconds,
        b.jobs,
        b.gpus.len().max(1),
        b.wall_seconds,
        if several { ", over the GPUs" } else { "" },
        b.critical_path_seconds,
        b.critical_path_ratio
    );
    let met = |ok: bool| if ok { "met" } else { "not met" };
    if several {
        let _ = writeln!(
            md,
            "| wall time / one-GPU wall | {:.2} |\n\nGoals: wall time within {:.1}× the critical \
             path, {}; at most {:.1}× the one-GPU wall, {}.",
            b.baseline_ratio,
            b.goal_ratio,
            met(b.critical_path_ratio <= b.goal_ratio),
            b.goal_gpus_ratio,
            met(b.baseline_ratio <= b.goal_gpus_ratio)
        );
    } else {
        let _ = writeln!(
            md,
            "\nGoals: wall time within {:.1}× the critical path, {}; the whole catalogue in under \
             {:.0} s, {}.",
            b.goal_ratio,
            met(b.critical_path_ratio <= b.goal_ratio),
            b.goal_wall_seconds,
            met(b.wall_seconds < b.goal_wall_seconds)
        );
    }
    let mut slow: Vec<_> = b
        .trials
        .iter()
        .filter_map(|t| Some((t.seconds?, t)))
        .collect();
    slow.sort_by(|x, y| y.0.total_cmp(&x.0));
    md.push_str(
        "\nThe critical path is the floor of any schedule, and the longest trials set it:\n\n",
    );
    for (seconds, t) in slow.iter().take(3) {
        let _ = writeln!(
            md,
            "- `{}`: {seconds:.1} s{}",
            t.trial,
            if t.exclusive { " (runs alone)" } else { "" }
        );
    }
    md
}

pub fn running(
    run_all_help: &str,
    report: Option<&Report>,
    bench: Option<&Report>,
    reproductions: &[casebook_report::reproduce::Reproduction],
) -> String {
    let mut md = String::from(
        "# How to run it\n\n\
         On a machine with an NVIDIA GPU and driver:\n\n```sh\ncargo xtask run-all\n```\n\n\
         Anywhere (without a GPU the GPU trials are ignored, with the reason):\n\n```sh\ncargo xtask test\n```\n\n\
         Both find a CUDA toolkit, or install NVIDIA's CUDA 13.0 compiler wheels from PyPI into \
         `target/cuda-wheels`. On a GPU machine without Rust, build `cargo xtask bundle` here and run \
         `target/bundle/casebook run-all` there. After reviewing the `.snap.new` files a run wrote, \
         `cargo xtask bless` accepts them; `cargo xtask docs` regenerates this book.\n\n\
         `cargo xtask bench-harness` (`casebook bench`) times the schedule; `cargo xtask reproduce \
         --runs N` (`casebook reproduce`) runs the trials N times and reports any whose outcome \
         differed.\n",
    );
    let benches = report
        .into_iter()
        .map(|r| (r, "docs/evidence/latest.json"))
        .chain(bench.map(|r| (r, BENCH_FILE)));
    for (r, file) in benches {
        if let Some(b) = &r.bench {
            md.push_str(&bench_section(r, b, file, report));
        }
    }
    if !reproductions.is_empty() {
        let _ = write!(
            md,
            "\n## How repeatable\n\n`casebook reproduce` runs the trials several times and compares \
             their outcomes. Each row counts the trials of its own run, the catalogue as it was \
             then{}. A reproduction made of whole runs (each a full run-all, neighbours \
             included) also compares the claims' verdicts.\n\n| GPU | run | runs | trials | \
             trials whose outcome differed | claims whose verdict differed |\n\
             |---|---|---|---|---|---|\n",
            report.map_or(String::new(), |l| format!(
                " (the latest run, {}, has {})",
                run_words(l),
                l.summary.trials
            ))
        );
        for r in reproductions {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} |",
                r.environment.gpu,
                reproduction_words(r),
                r.runs,
                r.trials.len(),
                if r.differing.is_empty() {
                    "none".to_owned()
                } else {
                    r.differing_text()
                },
                if r.differing_claims.is_empty() {
                    "none".to_owned()
                } else {
                    r.differing_claims_text()
                }
            );
        }
    }
    let _ = write!(
        md,
        "\n## `casebook run-all --help`\n\n```text\n{}\n```\n",
        run_all_help.trim_end()
    );
    md.push_str(&exit_codes());
    md
}

/// Every exit code, what it means and the commands that give it, from
/// `casebook_report::Exit`: the words each command's `--help` ends with.
fn exit_codes() -> String {
    use casebook_report::Exit;
    let mut md = String::from(
        "\n## Exit codes\n\nEach number means one thing, whichever command gives it; each \
         command's `--help` ends with the codes it gives. `cargo xtask` passes on `casebook`'s, \
         and gives 3 or 8 itself, before a build, where there is certainly no GPU or no \
         compute-sanitizer; `casebook-explain` gives `explain`'s.\n\n\
         | code | meaning | commands |\n|---|---|---|\n",
    );
    for exit in Exit::ALL {
        let commands: Vec<String> = exit.commands().map(|name| format!("`{name}`")).collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} |",
            exit.code(),
            exit.meaning(),
            commands.join(", ")
        );
    }
    md
}

/// Reproductions recorded before `casebook reproduce` wrote the commit it
/// was built from, each known by its GPU and its numbers of runs and
/// trials: the commit that added its file, and that commit's day.
const REPRODUCTIONS_WITHOUT_COMMIT: &[(&str, usize, usize, &str, &str)] = &[
    ("NVIDIA H100 80GB HBM3", 10, 62, "06c4344", "2026-11-22"),
    ("NVIDIA H200", 3, 62, "06c4344", "2026-11-22"),
];

/// Which run a reproduction is: the commit it was built from, or, for one
/// recorded before it said, the commit that added it.
fn reproduction_words(r: &casebook_report::reproduce::Reproduction) -> String {
    if let Some(commit) = &r.commit {
        return format!("built from `{}`", commit.get(..7).unwrap_or(commit));
    }
    REPRODUCTIONS_WITHOUT_COMMIT
        .iter()
        .find(|(gpu, runs, trials, _, _)| {
            *gpu == r.environment.gpu && *runs == r.runs && *trials == r.trials.len()
        })
        .map_or_else(
            || "its commit is not recorded".to_owned(),
            |(_, _, _, commit, day)| {
                format!("committed with `{commit}` on {day} (the file names no commit)")
            },
        )
}

/// `4068e38`, `4068e38 with uncommitted changes`, or `unknown` for a report
/// from before reports named their source.
fn source_text(source: &casebook_report::run::Source) -> String {
    if source.commit.is_empty() {
        "unknown".to_owned()
    } else {
        format!("`{}`", source.short())
    }
}

#[cfg(test)]
mod count_tests {
    use super::reproduction_words;
    use casebook_report::reproduce::Reproduction;

    fn reproduction(gpu: &str, runs: usize, trials: usize, commit: Option<&str>) -> Reproduction {
        let trials: Vec<_> = (0..trials)
            .map(|i| {
                serde_json::json!({"trial": format!("s::v{i}"), "role": "broken", "runs": runs,
                    "passed": runs, "distinct_outcomes": 1})
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "environment": {"gpu": gpu, "driver": "580", "cuda": "13.0", "toolkit": "13.0",
                "compute_capability": "9.0", "memory_total_bytes": 1, "device_count": 1},
            "runs": runs, "jobs": 8, "wall_seconds": [], "trials": trials, "differing": [],
            "commit": commit,
        }))
        .unwrap()
    }

    #[test]
    fn a_reproduction_says_which_run_its_counts_are() {
        assert_eq!(
            reproduction_words(&reproduction("NVIDIA H200", 3, 62, None)),
            "committed with `06c4344` on 2026-11-22 (the file names no commit)"
        );
        assert_eq!(
            reproduction_words(&reproduction(
                "NVIDIA H200",
                3,
                161,
                Some("0c04cf6cf715e2bc40d6b4667ea4976206f48ea0")
            )),
            "built from `0c04cf6`"
        );
        assert_eq!(
            reproduction_words(&reproduction("NVIDIA H200", 3, 70, None)),
            "its commit is not recorded"
        );
    }
}
