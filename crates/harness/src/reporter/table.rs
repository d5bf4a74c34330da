//! The tables printed at the end of a command: a run's trials, a sanitizer
//! pass's matrix, a bench, a reproduction; and the line that counts the
//! claims a run decided.

use casebook_model::{Role, Scenario};
use casebook_report::bench::Bench;
use casebook_report::reproduce::Reproduction;
use casebook_report::sanitizer::{Cell, TOOLS};
use casebook_report::{Report, TrialId};
use comfy_table::{Table, presets};

/// The table printed at the end of a run.
pub fn run(report: &Report, preset: &str) -> String {
    let mut table = Table::new();
    table.load_preset(preset);
    let several = report.run.gpus.len() > 1;
    let mut header = vec![
        "scenario", "variant", "expected", "observed", "verdict", "time",
    ];
    if several {
        header.push("GPU");
    }
    table.set_header(header);
    for r in &report.results {
        let mut row = vec![
            r.scenario.clone(),
            r.variant.clone(),
            r.expected.clone(),
            r.observed.clone(),
            r.verdict.shown().to_owned(),
            format!("{:.2} s", r.seconds),
        ];
        if several {
            let gpus = match (r.gpu, r.pair_gpu) {
                (Some(g), Some(h)) => format!("{g}+{h}"),
                (Some(g), None) => g.to_string(),
                (None, _) => String::new(),
            };
            row.push(gpus);
        }
        table.add_row(row);
    }
    table.to_string()
}

/// The detection matrix of a sanitizer pass: a row per trial, a column per
/// tool.
pub fn sanitizer(catalog: &[Scenario], cells: &[Cell]) -> String {
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    let mut header = vec!["scenario::variant".to_owned()];
    header.extend(TOOLS.iter().map(|(t, _)| (*t).to_owned()));
    table.set_header(header);
    let role = |c: &Cell| {
        catalog
            .iter()
            .find(|s| s.slug == c.scenario)
            .and_then(|s| s.variant(&c.variant))
            .map(|v| v.role)
    };
    let mut rows: Vec<(TrialId, Vec<String>)> = Vec::new();
    for c in cells {
        let key = c.trial();
        if rows.last().is_none_or(|(k, _)| *k != key) {
            rows.push((key.clone(), vec![String::new(); TOOLS.len()]));
        }
        let t = TOOLS.iter().position(|(t, _)| *t == c.tool).unwrap_or(0);
        let mark = match (c.flagged, c.passed) {
            (_, false) => "FAIL",
            _ if c.timed_out => "timed out",
            (true, _) => "flagged",
            (false, _) if role(c).is_some_and(|r| c.missed(r)) => "missed",
            _ => "clean",
        };
        rows.last_mut().expect("pushed").1[t] = mark.to_owned();
    }
    for (key, marks) in rows {
        let mut row = vec![key.to_string()];
        row.extend(marks);
        table.add_row(row);
    }
    table.to_string()
}

/// What `casebook bench` measured, against its goals.
pub fn bench(b: &Bench) -> String {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    t.set_header(["", "seconds", "goal"]);
    let several = b.gpus.len() > 1;
    let baseline = if b.baseline_left_out.is_empty() {
        b.baseline.clone()
    } else {
        format!(
            "{}, without the {} pair trial(s), which need two GPUs",
            b.baseline,
            b.baseline_left_out.len()
        )
    };
    t.add_row([
        baseline,
        format!("{:.1}", b.baseline_wall_seconds),
        String::new(),
    ]);
    t.add_row([
        format!(
            "default schedule ({} side by side on {} GPU(s))",
            b.jobs,
            b.gpus.len().max(1)
        ),
        format!("{:.1}", b.wall_seconds),
        if several {
            String::new()
        } else {
            format!("< {:.0}", b.goal_wall_seconds)
        },
    ]);
    if several {
        t.add_row([
            "wall / one-GPU wall".to_owned(),
            format!("{:.2}", b.baseline_ratio),
            format!("<= {:.1}", b.goal_gpus_ratio),
        ]);
    }
    t.add_row([
        "critical path (exclusive trials + the longest shared one or those that hold much memory, one after another; over the GPUs)".to_owned(),
        format!("{:.1}", b.critical_path_seconds),
        String::new(),
    ]);
    t.add_row([
        "wall / critical path".to_owned(),
        format!("{:.2}", b.critical_path_ratio),
        format!("<= {:.1}", b.goal_ratio),
    ]);
    t.to_string()
}
/// Each trial of a reproduction: how often it met its expectation, and how
/// many distinct outcomes it showed.
pub fn reproduction(r: &Reproduction) -> String {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED);
    t.set_header(["trial", "role", "expectation met", "distinct outcomes"]);
    for row in &r.trials {
        let role = match row.role {
            Role::Broken => "broken",
            Role::Fixed => "fixed",
            Role::AsWritten => "as written",
            Role::Contrast => "contrast",
        };
        t.add_row([
            row.trial.to_string(),
            role.to_owned(),
            format!("{}/{}", row.passed, row.runs),
            row.distinct_outcomes.to_string(),
        ]);
    }
    t.to_string()
}
/// `claims: N in the ledger: a confirmed, b refuted, c partly, …`.
pub fn claims_line(report: &Report, (untestable, not_yet): (usize, usize)) -> String {
    use casebook_model::ClaimVerdict::*;
    let verdicts: Vec<_> = report
        .results
        .iter()
        .flat_map(|r| r.claims.iter().map(|c| c.verdict))
        .collect();
    let count = |v| verdicts.iter().filter(|x| **x == v).count();
    format!(
        "claims: {} in the ledger: {} confirmed, {} refuted, {} partly, {} undecided by this run, {} untestable, {} not yet tested",
        verdicts.len() + untestable + not_yet,
        count(Confirmed),
        count(Refuted),
        count(Partly),
        count(Undecided),
        untestable,
        not_yet
    )
}
