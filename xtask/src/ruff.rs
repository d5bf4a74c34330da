//! The Python lint: `ruff check` and `ruff format --check` over the Python
//! recorder and the scenarios' PyTorch variants, with the rules in
//! `ruff.toml`. ruff comes from PATH, or from PyPI into `target/python-tools`.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, bail};

/// The ruff release the lint is pinned to when it is installed here.
const RUFF: &str = "ruff==0.17.6";

/// The Python in the tree.
const PATHS: &[&str] = &["crates/model/python", "scenarios"];

/// ruff: installed here, on PATH, or installed now.
pub fn locate() -> anyhow::Result<PathBuf> {
    find().map(Ok).unwrap_or_else(install)
}

/// Lints and format-checks the Python; an error names what failed.
pub fn check(ruff: &std::path::Path) -> anyhow::Result<()> {
    for args in [
        &["check", "--no-cache"][..],
        &["format", "--check", "--no-cache"],
    ] {
        eprintln!("== python: ruff {}", args.join(" "));
        let status = Command::new(ruff)
            .args(args)
            .args(PATHS)
            .current_dir(crate::project::root())
            .status()
            .with_context(|| format!("cannot run {}", ruff.display()))?;
        if !status.success() {
            bail!("ruff {} found problems (see above)", args[0]);
        }
    }
    Ok(())
}

fn tools() -> PathBuf {
    crate::project::root().join("target/python-tools")
}

fn find() -> Option<PathBuf> {
    let installed = tools().join("bin/ruff");
    if installed.is_file() {
        return Some(installed);
    }
    Command::new("ruff")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
        .then(|| PathBuf::from("ruff"))
}

fn install() -> anyhow::Result<PathBuf> {
    eprintln!(
        "installing {RUFF} from PyPI into {} for the Python lint (first time only)…",
        tools().display()
    );
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
        ])
        .arg(tools())
        .arg(RUFF)
        // pip warns against installing as root into the system; this goes
        // into a folder of the build's own, so the warning says nothing here.
        .env("PIP_ROOT_USER_ACTION", "ignore")
        .status()
        .context("installing ruff needs python3 with pip")?;
    if !status.success() {
        bail!("pip could not install {RUFF} ({status})");
    }
    Ok(tools().join("bin/ruff"))
}
