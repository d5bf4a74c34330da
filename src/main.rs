//! `casebook`: runs the catalogue on the GPU of this machine.

use std::path::PathBuf;
use std::process::ExitCode;

use casebook_harness::{child, run_all, workspace};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "casebook",
    version,
    about = "CUDA failures reproduced on a real GPU, next to their fixes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run every trial (or the filtered ones) on the GPU, each variant in its
    /// own process; print a table, write the reports and pack new snapshots.
    ///
    /// Exit codes: 0 all held; 1 a trial failed; 3 no GPU or driver;
    /// 4 a filter matched nothing; 5 snapshots are new or changed; 6 the
    /// report could not be written.
    RunAll {
        /// Run only trials whose `<slug>::<variant>` contains this (repeatable).
        #[arg(long = "filter", short = 'f', value_name = "TEXT")]
        filters: Vec<String>,
        /// Folder for report.json, report.md and snapshots.tar.
        #[arg(long, value_name = "DIR", default_value = "target/casebook")]
        out: PathBuf,
    },
    /// List the trials, one `<slug>::<variant>` a line, with what each expects.
    List,
    /// Print the environment fingerprint (GPU, driver, CUDA, toolkit) as JSON.
    Env,
}

fn main() -> ExitCode {
    let catalog = cuda_casebook::catalog();
    child::serve_if_child(&catalog);
    workspace::pin_insta_root(&workspace::root());
    match Cli::parse().command {
        Command::RunAll { filters, out } => {
            workspace::quiet_insta();
            run_all::run_all(&catalog, &run_all::Options { filters, out })
        }
        Command::List => {
            for scenario in &catalog {
                for variant in &scenario.variants {
                    println!("{:<40} {}", scenario.trial_name(variant), variant.expect);
                }
            }
            ExitCode::SUCCESS
        }
        Command::Env => match casebook_harness::environment::detect() {
            Ok(env) => {
                println!("{}", serde_json::to_string_pretty(&env).unwrap_or_default());
                ExitCode::SUCCESS
            }
            Err(reason) => {
                eprintln!("error: no GPU: {reason}");
                ExitCode::from(run_all::exit::NO_GPU)
            }
        },
    }
}
