//! `report.md`: a run's report as a page.

use std::fmt::Write as _;

use casebook_report::{Report, Verdict};
use comfy_table::presets;

use crate::reporter::table;

/// `report.md`.
pub fn markdown(report: &Report) -> String {
    let env = &report.environment;
    let mut md = String::new();
    let _ = writeln!(md, "# cuda-casebook run of {}\n", report.created);
    let _ = writeln!(
        md,
        "- GPU: {} (compute {}, {} device(s), {:.1} GiB)\n- Driver: {} (CUDA {})\n- Toolkit: {}\n- Wall time: {:.1} s\n- Trials: {} passed, {} failed; snapshots new or changed: {}\n",
        env.gpu,
        env.compute_capability,
        env.device_count,
        env.memory_total_bytes as f64 / (1u64 << 30) as f64,
        env.driver,
        env.cuda,
        env.toolkit,
        report.wall_seconds,
        report.summary.passed,
        report.summary.failed,
        report.summary.snapshots_changed,
    );
    if let Some(torch) = &report.run.pytorch {
        let _ = writeln!(md, "- PyTorch: {torch}\n");
    }
    if let Some(path) = &report.run.critical_path {
        let _ = writeln!(md, "- Schedule: {path}\n");
    }
    md.push_str(&table::run(report, presets::ASCII_MARKDOWN));
    md.push('\n');
    let claims: Vec<_> = report
        .results
        .iter()
        .flat_map(|r| r.claims.iter().map(move |c| (r, c)))
        .collect();
    if !claims.is_empty() {
        md.push_str("\n## Claims decided by this run\n\n");
        for (r, c) in claims {
            let _ = writeln!(md, "- `{}`: {:?}, from {}", c.id, c.verdict, r.trial());
        }
    }
    if !report.run.skipped.is_empty() {
        md.push_str("\n## Skipped (not run)\n\n");
        for s in &report.run.skipped {
            let _ = writeln!(md, "- `{}`: {}", s.trial, s.reason);
        }
    }
    if let Some(signal) = &report.run.interrupted {
        let not_run: Vec<String> = report.run.not_run.iter().map(|t| t.to_string()).collect();
        let _ = writeln!(
            md,
            "\n## Interrupted by {signal}\n\nNot run: {}",
            not_run.join(", ")
        );
    }
    if !report.run.leftovers.is_empty() {
        md.push_str("\n## Memory left held\n\n");
        for l in &report.run.leftovers {
            let _ = writeln!(md, "- {l}");
        }
    }
    let failures: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::Fail)
        .collect();
    if !failures.is_empty() {
        md.push_str("\n## Failures\n\n");
        for r in failures {
            let _ = writeln!(md, "- {}: {}", r.trial(), r.reason.as_deref().unwrap_or(""));
        }
    }
    md
}
