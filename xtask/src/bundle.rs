//! `cargo xtask bundle`: release binaries for a GPU machine without Rust.

use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, bail};

use crate::toolkit;

/// The bundle must travel with the working tree, which may be 64 MiB.
const LIMIT: u64 = 48 << 20;

#[derive(clap::Args)]
pub struct Args {}

/// What the binaries are built from, taken before the build starts; the
/// report of every run made with them names it (`report::Source`).
pub fn source() -> anyhow::Result<serde_json::Value> {
    let git = |args: &[&str]| -> anyhow::Result<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(crate::project::root())
            .output()?;
        if !out.status.success() {
            bail!("git {} failed: is this a git checkout?", args.join(" "));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    Ok(serde_json::json!({
        "commit": git(&["rev-parse", "HEAD"])?,
        "dirty": !git(&["status", "--porcelain", "--untracked-files=no"])?.is_empty(),
    }))
}

pub fn run(_: Args) -> anyhow::Result<ExitCode> {
    let source = source()?;
    let casebook = toolkit::build_casebook()?;
    let root = crate::project::root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut tests = Command::new(&cargo);
    tests
        .args([
            "test",
            "--release",
            "--no-run",
            "--package",
            "cuda-casebook",
            "--test",
            "snapshots",
        ])
        .args(["--message-format", "json-render-diagnostics"])
        .current_dir(&root)
        .stdout(Stdio::piped());
    let output = tests.output()?;
    if !output.status.success() {
        bail!("building the snapshot suite failed");
    }
    let suite = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "snapshots")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .context("cargo reported no snapshot suite executable")?;

    let dir = root.join("target/bundle");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let explain_built = Command::new(&cargo)
        .args(["build", "--release", "--package", "casebook-explain"])
        .current_dir(&root)
        .status()?;
    if !explain_built.success() {
        bail!("building casebook-explain failed");
    }
    let mut total = 0;
    let cust = casebook.with_file_name("casebook-cust");
    let explain = casebook.with_file_name("casebook-explain");
    for (from, name) in [
        (casebook, "casebook"),
        (cust, "casebook-cust"),
        (explain, "casebook-explain"),
        (suite, "snapshots"),
    ] {
        let to = dir.join(name);
        std::fs::copy(&from, &to).with_context(|| format!("copying {}", from.display()))?;
        let _ = Command::new("strip").arg(&to).status();
        total += std::fs::metadata(&to)?.len();
    }
    std::fs::write(
        dir.join("source.json"),
        serde_json::to_string_pretty(&source)?,
    )?;
    println!("built from {source}");
    if total > LIMIT {
        bail!(
            "the bundle is {} MiB, over its {} MiB budget",
            total >> 20,
            LIMIT >> 20
        );
    }
    println!(
        "{} ({:.1} MiB): casebook, casebook-cust, casebook-explain, snapshots",
        dir.display(),
        total as f64 / (1 << 20) as f64
    );
    println!("on the GPU machine, from the repository root:");
    println!("  target/bundle/casebook run-all --out OUT_DIR");
    println!("  CASEBOOK_REQUIRE_GPU=1 INSTA_UPDATE=no target/bundle/snapshots");
    println!("  target/bundle/casebook-explain < error.txt");
    Ok(ExitCode::SUCCESS)
}
