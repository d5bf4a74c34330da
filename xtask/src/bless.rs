//! `cargo xtask bless`: accept reviewed snapshots from a GPU run.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

#[derive(clap::Args)]
pub struct Args {
    /// A run's snapshots.tar (from `casebook run-all --out DIR`) to unpack first.
    #[arg(long, value_name = "TAR")]
    from: Option<PathBuf>,
    /// That run's report.json: copied to docs/evidence/latest.json (and its
    /// report.md beside it to latest.md), to commit with the snapshots.
    #[arg(long, value_name = "JSON")]
    report: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = crate::project::root();
    if let Some(tar) = &args.from {
        let file =
            std::fs::File::open(tar).with_context(|| format!("opening {}", tar.display()))?;
        let mut archive = tar::Archive::new(file);
        for entry in archive.entries()? {
            let mut entry = entry?;
            let path = entry.path()?.into_owned();
            let ok = path.starts_with("scenarios") && path.to_string_lossy().ends_with(".snap.new");
            if !ok || path.components().any(|c| c.as_os_str() == "..") {
                bail!(
                    "{} holds {}, which is not a pending snapshot",
                    tar.display(),
                    path.display()
                );
            }
            let dest = root.join(&path);
            if let Some(dir) = dest.parent() {
                std::fs::create_dir_all(dir)?;
            }
            entry.unpack(dest)?;
        }
    }
    let mut accepted = 0;
    for scenario in std::fs::read_dir(root.join("scenarios"))? {
        let dir = scenario?.path().join("snapshots");
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if let Some(name) = path.to_str().and_then(|p| p.strip_suffix(".new"))
                && name.ends_with(".snap")
            {
                std::fs::rename(&path, name)?;
                println!(
                    "accepted {}",
                    name.strip_prefix(root.to_str().unwrap_or(""))
                        .unwrap_or(name)
                );
                accepted += 1;
            }
        }
    }
    if let Some(report) = &args.report {
        let evidence = root.join("docs/evidence");
        std::fs::create_dir_all(&evidence)?;
        std::fs::copy(report, evidence.join("latest.json"))
            .with_context(|| format!("copying {}", report.display()))?;
        let md = report.with_extension("md");
        if md.is_file() {
            std::fs::copy(&md, evidence.join("latest.md"))?;
        }
        let sanitize = report.with_file_name("sanitize.json");
        if sanitize.is_file() {
            std::fs::copy(&sanitize, evidence.join("sanitize.json"))?;
            println!("evidence: docs/evidence/sanitize.json");
        }
        println!(
            "evidence: docs/evidence/latest.json from {}",
            report.display()
        );
    }
    println!("{accepted} snapshot(s) accepted");
    Ok(ExitCode::SUCCESS)
}
