//! `cargo xtask sanitize`: build, then every variant under compute-sanitizer.

use std::process::ExitCode;

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
    crate::run_all::run_casebook(
        "sanitize",
        &args.filter.filters,
        &[],
        false,
        &[("sanitize.json", "sanitize.json")],
    )
}
