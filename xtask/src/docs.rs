//! `cargo xtask docs`: regenerate the cookbook, or check it is fresh.

use std::process::{Command, ExitCode};

use crate::toolkit;

#[derive(clap::Args, Default)]
pub struct Args {
    /// Change nothing; fail if a committed page is stale.
    #[arg(long)]
    check: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    toolkit::ensure()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["run", "--quiet", "--bin", "casebook", "--", "docs"])
        .current_dir(crate::project::root());
    if args.check {
        cmd.arg("--check");
    }
    Ok(crate::project::exit_of(cmd.status()?))
}
