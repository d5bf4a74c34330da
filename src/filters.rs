//! The option that selects trials, read alike by `casebook` and by
//! `cargo xtask` (which takes this file by path: its binary stays free of
//! the workspace's crates).

/// Which trials a command takes: every command that selects trials
/// reads the same option.
#[derive(clap::Args)]
pub struct Filters {
    /// Only trials whose `<slug>::<variant>` contains this (repeatable;
    /// a value may start with '-': `--filter -py`).
    #[arg(
        long = "filter",
        short = 'f',
        value_name = "TEXT",
        allow_hyphen_values = true
    )]
    pub filters: Vec<String>,
}
