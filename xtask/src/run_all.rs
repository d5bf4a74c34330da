//! `cargo xtask run-all`: build, then every trial on this machine's GPU.

use std::process::{Command, ExitCode};

use anyhow::Context;

use crate::toolkit;

#[derive(clap::Args)]
pub struct Args {
    /// Run only trials whose `<slug>::<variant>` contains this (repeatable).
    #[arg(long = "filter", short = 'f', value_name = "TEXT")]
    filters: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = crate::root();
    let casebook = toolkit::build_casebook()?;
    let out = root.join("target/casebook");
    let mut cmd = Command::new(&casebook);
    cmd.arg("run-all").arg("--out").arg(&out).current_dir(&root);
    for f in &args.filters {
        cmd.arg("--filter").arg(f);
    }
    // Under run-all a missing GPU is a failure, never a skip.
    cmd.env(casebook_require_gpu(), "1");
    let status = cmd.status()?;
    if args.filters.is_empty() && out.join("report.json").is_file() {
        for (from, to) in [("report.json", "latest.json"), ("report.md", "latest.md")] {
            let dest = root.join("docs/evidence").join(to);
            std::fs::copy(out.join(from), &dest)
                .with_context(|| format!("copying to {}", dest.display()))?;
        }
        eprintln!("evidence refreshed: docs/evidence/latest.json and latest.md");
    }
    Ok(crate::exit_of(status))
}

/// The variable the harness reads (`casebook_harness::REQUIRE_GPU_ENV`);
/// spelled here to keep xtask free of the workspace's crates.
fn casebook_require_gpu() -> &'static str {
    "CASEBOOK_REQUIRE_GPU"
}
