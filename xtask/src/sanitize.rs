//! `cargo xtask sanitize`: build, then every variant under compute-sanitizer.

use std::process::{Command, ExitCode};

use anyhow::Context;

use crate::toolkit;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    filter: crate::run_all::Filters,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // What `casebook sanitize` would refuse after the build, refused before
    // it: no GPU (3) first, then no compute-sanitizer (8).
    if let Some(exit) = crate::gpu::require_sanitize() {
        return Ok(exit);
    }
    let root = crate::project::root();
    let casebook = toolkit::build_casebook()?;
    let out = root.join("target/casebook");
    let mut cmd = Command::new(&casebook);
    cmd.arg("sanitize")
        .arg("--out")
        .arg(&out)
        .current_dir(&root);
    for f in &args.filter.filters {
        cmd.arg("--filter").arg(f);
    }
    let status = cmd.status()?;
    if args.filter.filters.is_empty() && out.join("sanitize.json").is_file() {
        let dest = root.join("docs/evidence/sanitize.json");
        std::fs::copy(out.join("sanitize.json"), &dest)
            .with_context(|| format!("copying to {}", dest.display()))?;
        eprintln!("evidence refreshed: docs/evidence/sanitize.json");
    }
    Ok(crate::project::exit_of(status))
}
