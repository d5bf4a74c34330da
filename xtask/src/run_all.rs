//! `cargo xtask run-all`, `bench-harness` and `reproduce`: build, then run
//! the `casebook` command of the same name on this machine's GPU.

use std::process::{Command, ExitCode};

use anyhow::Context;

use crate::toolkit;

pub use filters::Filters;

#[path = "../../src/filters.rs"]
mod filters;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    filter: Filters,
    /// Trials side by side at most [default: one per CPU, at most 8].
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<u16>,
}

#[derive(clap::Args)]
pub struct BenchArgs {
    #[command(flatten)]
    filter: Filters,
}

#[derive(clap::Args)]
pub struct ReproduceArgs {
    /// How many runs.
    #[arg(long, default_value_t = 10)]
    runs: u16,
    #[command(flatten)]
    filter: Filters,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut extra = Vec::new();
    if let Some(jobs) = args.jobs {
        extra.extend(["--jobs".to_owned(), jobs.to_string()]);
    }
    casebook("run-all", "run-all", &args.filter.filters, &extra)
}

pub fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    casebook("bench-harness", "bench", &args.filter.filters, &[])
}

pub fn reproduce(args: ReproduceArgs) -> anyhow::Result<ExitCode> {
    casebook(
        "reproduce",
        "reproduce",
        &args.filter.filters,
        &["--runs".to_owned(), args.runs.to_string()],
    )
}

/// Checks for a GPU, then runs `casebook <command>` with the filters and
/// `extra` (see [`run_casebook`]); a full run-all or bench refreshes the
/// committed evidence. `task` is the xtask command, for the messages.
fn casebook(
    task: &str,
    command: &str,
    filters: &[String],
    extra: &[String],
) -> anyhow::Result<ExitCode> {
    if let Some(exit) = crate::gpu::require(task) {
        return Ok(exit);
    }
    let evidence: &[(&str, &str)] = match command {
        "reproduce" => &[],
        _ => &[("report.json", "latest.json"), ("report.md", "latest.md")],
    };
    // Here a missing GPU is a failure, never a skip.
    run_casebook(command, filters, extra, true, evidence)
}

/// Builds `casebook` and runs `casebook <command> --out target/casebook`
/// with `extra` and the filters from the repository root (a missing GPU a
/// failure where `require_gpu`). Where no filter narrowed the run and it
/// wrote the first of `evidence`'s files, copies each (`(written, committed)`)
/// into docs/evidence.
pub(crate) fn run_casebook(
    command: &str,
    filters: &[String],
    extra: &[String],
    require_gpu: bool,
    evidence: &[(&str, &str)],
) -> anyhow::Result<ExitCode> {
    let root = crate::project::root();
    let casebook = toolkit::build_casebook()?;
    let out = root.join("target/casebook");
    let mut cmd = Command::new(&casebook);
    cmd.arg(command)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .current_dir(&root);
    for f in filters {
        cmd.arg("--filter").arg(f);
    }
    if require_gpu {
        cmd.env(casebook_require_gpu(), "1");
    }
    let status = cmd.status()?;
    if let Some((first, _)) = evidence.first()
        && filters.is_empty()
        && out.join(first).is_file()
    {
        for (from, to) in evidence {
            let dest = root.join("docs/evidence").join(to);
            std::fs::copy(out.join(from), &dest)
                .with_context(|| format!("copying to {}", dest.display()))?;
        }
        let committed: Vec<&str> = evidence.iter().map(|(_, to)| *to).collect();
        eprintln!(
            "evidence refreshed: docs/evidence/{}",
            committed.join(" and ")
        );
    }
    Ok(crate::project::exit_of(status))
}

/// The variable the harness reads (`casebook_harness::REQUIRE_GPU_ENV`);
/// spelled here to keep xtask free of the workspace's crates.
fn casebook_require_gpu() -> &'static str {
    "CASEBOOK_REQUIRE_GPU"
}
