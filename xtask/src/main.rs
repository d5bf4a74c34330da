//! `cargo xtask`: the project's own automation. One module per command.

mod archive;
mod bless;
mod book;
mod bundle;
mod docs;
mod gpu;
#[cfg(test)]
mod layers;
mod new_scenario;
mod project;
mod ruff;
mod run_all;
mod sanitize;
#[cfg(test)]
mod story;
mod test;
mod toolkit;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "cuda-casebook's build, test and GPU-run automation"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the whole suite anywhere: format, lints, unit and fault tests, and
    /// the snapshot suite (without a GPU, the GPU trials are counted as
    /// skipped, once, with the reason). Installs the CUDA toolkit first if
    /// none is found.
    Test(test::Args),
    /// Build, then run every trial on this machine's GPU and write the
    /// reports; a missing GPU is a failure. A full run also refreshes
    /// docs/evidence/latest.{json,md}.
    RunAll(run_all::Args),
    /// Build, then time the schedule on this machine's GPU: the trials one at
    /// a time and with the default schedule, against the critical path. A
    /// full run refreshes docs/evidence/latest.{json,md} with the timings.
    BenchHarness(run_all::BenchArgs),
    /// Build, then run the trials N times on this machine's GPU and report
    /// every trial whose outcome differed between runs.
    Reproduce(run_all::ReproduceArgs),
    /// Build, then run every variant under compute-sanitizer's five
    /// configurations; a full run refreshes docs/evidence/sanitize.json.
    Sanitize(sanitize::Args),
    /// Build the release binaries into target/bundle/, for a GPU machine
    /// that has no Rust toolchain.
    Bundle(bundle::Args),
    /// Archive the snapshot suite with cargo nextest into target/archive/,
    /// with cargo-nextest and the casebook binaries, for GPU machines that
    /// have no Rust toolchain; prints the command that runs it there.
    Archive(archive::Args),
    /// Accept reviewed snapshots: unpack a run's snapshots.tar if given,
    /// turn every .snap.new into .snap, and commit-ready the run's report.
    Bless(bless::Args),
    /// Regenerate the cookbook (docs/src and the scenarios' READMEs) from the
    /// code and the latest GPU report; `--check` fails when it is stale.
    Docs(docs::Args),
    /// Build the cookbook with mdBook and check it in headless Chromium: pages
    /// render, links resolve, images load, code blocks have text.
    Book(book::Args),
    /// Write a new case's folder that builds (manifest, build script,
    /// vocabulary, a broken and a fixed variant) and register it in the
    /// root Cargo.toml and the catalogue in src/lib.rs.
    NewScenario(new_scenario::Args),
    /// Find the CUDA toolkit, installing NVIDIA's PyPI wheels into
    /// target/cuda-wheels if none is found, and print where it is.
    Toolkit,
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Test(args) => test::run(args),
        Command::RunAll(args) => run_all::run(args),
        Command::BenchHarness(args) => run_all::bench(args),
        Command::Reproduce(args) => run_all::reproduce(args),
        Command::Sanitize(args) => sanitize::run(args),
        Command::Bundle(args) => bundle::run(args),
        Command::Archive(args) => archive::run(args),
        Command::Bless(args) => bless::run(args),
        Command::Docs(args) => docs::run(args),
        Command::Book(args) => book::run(args),
        Command::NewScenario(args) => new_scenario::run(args),
        Command::Toolkit => toolkit::ensure().map(|tk| {
            println!("{}", tk.home.display());
            ExitCode::SUCCESS
        }),
    };
    result.unwrap_or_else(|e| {
        eprintln!("error: {e:#}");
        ExitCode::from(2)
    })
}
