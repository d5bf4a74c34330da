//! `casebook-explain`: `casebook explain` on its own, for machines without
//! the casebook's GPU build (`cargo install --path crates/explain`).

use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(name = "casebook-explain", version)]
struct Cli {
    #[command(flatten)]
    args: casebook_explain::cli::Args,
}

fn main() -> ExitCode {
    casebook_explain::cli::run(&Cli::parse().args)
}
