//! `cargo xtask sanitize`: build, then every variant under compute-sanitizer.

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
    let tk = toolkit::ensure()?;
    let root = crate::root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(&cargo);
    build
        .args(["build", "--release", "--bin", "casebook"])
        .current_dir(&root);
    tk.apply(&mut build);
    if !build.status()?.success() {
        anyhow::bail!("the build failed");
    }
    let out = root.join("target/casebook");
    let mut cmd = Command::new(root.join("target/release/casebook"));
    cmd.arg("sanitize")
        .arg("--out")
        .arg(&out)
        .current_dir(&root);
    for f in &args.filters {
        cmd.arg("--filter").arg(f);
    }
    let status = cmd.status()?;
    if args.filters.is_empty() && out.join("sanitize.json").is_file() {
        let dest = root.join("docs/evidence/sanitize.json");
        std::fs::copy(out.join("sanitize.json"), &dest)
            .with_context(|| format!("copying to {}", dest.display()))?;
        eprintln!("evidence refreshed: docs/evidence/sanitize.json");
    }
    Ok(crate::exit_of(status))
}
