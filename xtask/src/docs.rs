//! `cargo xtask docs`: regenerate the cookbook, or check it is fresh.

use std::process::{Command, ExitCode};

use crate::toolkit;

#[derive(clap::Args)]
pub struct Args {
    /// Change nothing; fail if a committed page is stale.
    #[arg(long)]
    check: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let tk = toolkit::ensure()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["run", "--quiet", "--bin", "casebook", "--", "docs"])
        .current_dir(crate::root());
    if args.check {
        cmd.arg("--check");
    }
    tk.apply(&mut cmd);
    Ok(crate::exit_of(cmd.status()?))
}
