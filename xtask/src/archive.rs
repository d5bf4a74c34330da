//! `cargo xtask archive`: the snapshot suite as a nextest archive, for GPU
//! machines without Rust. nextest builds the archive here and runs it there
//! (`--archive-file`, `--workspace-remap`), shards it (`--partition`) and
//! schedules the trials that need a whole GPU through the test group in
//! `.config/nextest.toml`. What nextest does not carry is added beside it:
//! `cargo-nextest` itself (compressed with xz), and the `casebook` binaries (`run-all`,
//! `sanitize`, `matrix`), which the archive holds as extra files.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

use crate::toolkit;

/// What travels with the working tree, which may be 64 MiB.
const LIMIT: u64 = 56 << 20;

/// The commands that run the archive on a GPU machine, from the repository
/// root: the suite (a shard of it), then the shard's report.
pub const RUN_THERE: &[&str] = &[
    "xz -dkf target/archive/cargo-nextest.xz",
    "mkdir -p target/nextest-archive",
    "CASEBOOK_REQUIRE_GPU=1 INSTA_UPDATE=no CASEBOOK_RESULTS=$PWD/target/results \\",
    "  target/archive/cargo-nextest nextest run --no-fail-fast --archive-file target/archive/casebook-suite.tar.zst \\",
    "  --workspace-remap . --extract-to target/nextest-archive --partition count:1/2",
    "target/nextest-archive/target/release/casebook collect target/results --partition 1/2 --out OUT_DIR",
];

/// Where the archive and what goes with it are written.
pub const DIR: &str = "target/archive";

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_: Args) -> anyhow::Result<ExitCode> {
    let root = crate::project::root();
    let source = crate::bundle::source()?;
    // The casebook binaries first: the archive includes them, with the
    // source.json that names their commit beside them (and only there: a
    // later build in place reads git instead).
    let casebook = toolkit::build_casebook()?;
    let beside = casebook.with_file_name("source.json");
    std::fs::write(&beside, serde_json::to_string_pretty(&source)?)?;
    let dir = root.join(DIR);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let archive = dir.join("casebook-suite.tar.zst");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("archiving the snapshot suite with cargo nextest (release)…");
    let status = Command::new(&cargo)
        .args([
            "nextest",
            "archive",
            "--release",
            "--package",
            "cuda-casebook",
            "--test",
            "snapshots",
            "--archive-file",
        ])
        .arg(&archive)
        .current_dir(&root)
        .status()
        .context(
            "running cargo nextest: is cargo-nextest installed (cargo install cargo-nextest)?",
        );
    let _ = std::fs::remove_file(&beside);
    if !status?.success() {
        bail!("cargo nextest archive failed");
    }
    let nextest = which("cargo-nextest").context("cargo-nextest is not on PATH")?;
    let copied = dir.join("cargo-nextest");
    std::fs::copy(&nextest, &copied).with_context(|| format!("copying {}", nextest.display()))?;
    // Compressed, cargo-nextest is a fifth of its size: with the working
    // tree and the archive it fits what travels to a GPU machine.
    let status = Command::new("xz")
        .args(["-9", "-T0", "-f"])
        .arg(&copied)
        .status()
        .context("running xz: is it installed (Debian: xz-utils)?")?;
    if !status.success() {
        bail!("xz could not compress {}", copied.display());
    }
    let carried = dir.join("cargo-nextest.xz");
    let total = size(&archive)? + size(&carried)?;
    if total > LIMIT {
        bail!(
            "the archive and cargo-nextest are {} MiB, over their {} MiB budget",
            total >> 20,
            LIMIT >> 20
        );
    }
    println!(
        "{} ({:.1} MiB): casebook-suite.tar.zst, cargo-nextest.xz",
        dir.display(),
        total as f64 / (1 << 20) as f64
    );
    println!("built from {source}");
    println!("on the GPU machine, from the repository root (a checkout of the same commit):");
    for line in RUN_THERE {
        println!("  {line}");
    }
    Ok(ExitCode::SUCCESS)
}

fn size(path: &Path) -> anyhow::Result<u64> {
    Ok(std::fs::metadata(path)
        .with_context(|| format!("{} is missing", path.display()))?
        .len())
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(program))
            .find(|p| p.is_file())
    })
}
