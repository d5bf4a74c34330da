//! cuda-casebook: the ways CUDA programs fail, reproduced on a real GPU next
//! to their fixes. This crate holds the catalogue and the `casebook` command
//! line; `tests/snapshots.rs` is the regression suite.

use std::path::{Path, PathBuf};

use casebook_model::Scenario;

mod cases;
mod filters;
pub mod ledger;

/// Every scenario, in the order a reader meets them (each folder's
/// `Cargo.toml` gives its place; `cargo xtask docs` writes the list).
pub fn catalog() -> Vec<Scenario> {
    cases::all()
}

pub mod cli {
    use super::PathBuf;
    use casebook_report::Exit;
    use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

    #[derive(Parser)]
    #[command(
        name = "casebook",
        version,
        about = "CUDA failures reproduced on a real GPU, next to their fixes"
    )]
    pub struct Cli {
        #[command(subcommand)]
        pub command: Command,
    }

    pub use crate::filters::Filters;

    /// Which trials to run, and where the reports go.
    #[derive(clap::Args)]
    pub struct Selection {
        #[command(flatten)]
        pub filter: Filters,
        /// Folder for report.json, report.md, junit.xml, snapshots.tar (and
        /// reproduce.json, for reproduce).
        #[arg(long, value_name = "DIR", default_value = "target/casebook")]
        pub out: PathBuf,
    }

    #[derive(Subcommand)]
    pub enum Command {
        /// Find the reproduced case behind a pasted CUDA error: paste the
        /// whole traceback or log (paths and device numbers are ignored; an
        /// out-of-memory message's figures are read for what they say).
        /// Needs no GPU.
        Explain(casebook_explain::cli::Args),
        /// Run every trial (or the filtered ones) on the GPU, each variant in its
        /// own process; print a table, write the reports and pack new snapshots.
        ///
        /// Trials are spread over the visible GPUs (CUDA_VISIBLE_DEVICES
        /// narrows them), each child pinned to one. Trials that share a GPU
        /// run side by side; those that need the whole GPU run alone on one.
        /// Whenever a GPU falls idle, its device memory must be back to its
        /// baseline, or the holder is named. No trial outlives the run,
        /// however it ends (SIGKILL included). One run at a time on each
        /// GPU: a second on the same GPU waits for its lock and says who holds
        /// it; runs pinned to different GPUs (CUDA_VISIBLE_DEVICES) go side by
        /// side.
        RunAll {
            #[command(flatten)]
            selection: Selection,
            /// Trials side by side at most [default: one per CPU, at most 8].
            #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
            jobs: Option<u16>,
            /// Run only shard K of N (from 1): the catalogue's trials, in
            /// `casebook list` order, dealt out one per shard in turn, so
            /// N machines (or GPUs) running K = 1..N run each trial once.
            /// The report records the shard; `casebook matrix` merges the
            /// shards' reports and says which is missing.
            #[arg(long, value_name = "K/N")]
            partition: Option<casebook_report::Partition>,
            /// Run only the trials FILE names, one `<slug>::<variant>` a line
            /// (blank lines and `#` comments aside); a name the catalogue
            /// lacks is an error, as a filter that matches nothing is. With
            /// --filter, the trials both select. docs/evidence/trials-dacd71a.txt
            /// is the set the schedule's goal is timed on.
            #[arg(long, value_name = "FILE")]
            trials: Option<PathBuf>,
        },
        /// Time the schedule: run the trials one at a time (with several
        /// GPUs visible: on the first GPU alone), then with the default
        /// schedule on every GPU, and report wall time against the critical
        /// path (exclusive trials plus the longest shared one, over the
        /// GPUs) as `critical_path_ratio`, and against the first run as
        /// `baseline_ratio`, in report.json.
        Bench {
            #[command(flatten)]
            selection: Selection,
        },
        /// Run the trials N times and report every trial whose
        /// hardware-independent outcome differed between runs, every claim
        /// whose verdict differed, and how often each broken variant
        /// reproduced its failure. Unfiltered, each run is a whole run-all,
        /// schedule and neighbours included. With --from, compare run-all
        /// reports of one commit made one at a time instead of running.
        Reproduce {
            /// How many runs.
            #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..))]
            runs: u16,
            /// Run nothing: compare these run-all report.json files, each a
            /// whole run of one commit.
            #[arg(long, value_name = "REPORT", num_args = 1.., conflicts_with = "runs")]
            from: Vec<PathBuf>,
            #[command(flatten)]
            selection: Selection,
            /// Trials side by side at most [default: one per CPU, at most 8].
            #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
            jobs: Option<u16>,
        },
        /// List the trials, one `<slug>::<variant>` a line under a header,
        /// with where each runs (alone on its GPU, or sharing it with other
        /// trials; in run-all and under compute-sanitizer) and what it
        /// expects.
        List {
            #[command(flatten)]
            filter: Filters,
        },
        /// Print the environment fingerprint (GPU, driver, CUDA, toolkit) as JSON.
        Env,
        /// Run every variant under compute-sanitizer (memcheck with leak
        /// checking, memcheck with stream-ordered race tracking, racecheck,
        /// synccheck, initcheck) and record the detection matrix.
        Sanitize {
            #[command(flatten)]
            filter: Filters,
            /// Folder for sanitize.json and snapshots.tar.
            #[arg(long, value_name = "DIR", default_value = "target/casebook")]
            out: PathBuf,
            /// Sanitizer runs at once on each GPU for scenarios that do not
            /// fill it (those that do run one at a time, after the others).
            /// A cell spoiled beside others (a variant expected clean timed
            /// out, or the variant ran out of memory it does not declare)
            /// runs again alone at the end; only that run counts.
            #[arg(long, default_value_t = 8)]
            jobs: usize,
            /// Run nothing: assemble the report and the matrix snapshots from
            /// the sanitize-cells.jsonl files of earlier passes (later files
            /// win), with the environment of a run-all report.json from the
            /// same machine.
            #[arg(long, value_name = "JSONL", num_args = 1.., requires = "environment")]
            from_cells: Vec<PathBuf>,
            /// The run-all report.json whose environment the cells share.
            #[arg(long, value_name = "JSON")]
            environment: Option<PathBuf>,
        },
        /// Merge run-all reports from several machines (GPU, driver, CUDA,
        /// toolkit), or the shards of one partitioned run, into one matrix of
        /// scenario × variant × machine: each cell the verdict, what the
        /// variant showed, and its key figures (device memory per context,
        /// contexts before the driver refuses one, the default device heap,
        /// device memory per cuBLAS handle, speed-ups). A difference between
        /// machines is flagged with each machine's value, never averaged.
        /// Writes matrix.json and matrix.md (the cookbook's fleet page is
        /// made from docs/evidence/matrix.json).
        Matrix {
            /// run-all report.json files, one column per machine, in order.
            #[arg(required = true, value_name = "REPORT")]
            reports: Vec<PathBuf>,
            /// Folder for matrix.json and matrix.md.
            #[arg(long, value_name = "DIR", default_value = "target/casebook")]
            out: PathBuf,
        },
        /// Make a run-all report from the results the snapshot suite's trials
        /// wrote where CASEBOOK_RESULTS pointed (under nextest, where each
        /// trial is a process of its own, as in a shard of the nextest
        /// archive), with this machine's environment: report.json, report.md
        /// and junit.xml, which `casebook matrix` merges.
        Collect {
            /// The folder CASEBOOK_RESULTS named.
            #[arg(value_name = "DIR")]
            results: PathBuf,
            /// The shard the results are of (`--partition count:K/N` to nextest).
            #[arg(long, value_name = "K/N")]
            partition: Option<casebook_report::Partition>,
            /// Folder for report.json, report.md and junit.xml.
            #[arg(long, value_name = "DIR", default_value = "target/casebook")]
            out: PathBuf,
        },
        /// Generate the cookbook (docs/src, the scenarios' READMEs) from the
        /// scenarios, their sources and docs/evidence/latest.json.
        Docs {
            /// Change nothing; fail if a committed page is stale.
            #[arg(long)]
            check: bool,
        },
    }

    /// The command line, each command's help ending with the exit codes it
    /// gives ([`Exit::given_by`], in that type's words).
    pub fn command() -> clap::Command {
        casebook_report::exit::COMMANDS
            .iter()
            .fold(Cli::command(), |cmd, name| {
                let codes = casebook_report::exit::of_command(name);
                cmd.mut_subcommand(*name, |c| c.after_help(Exit::help(&codes)))
            })
    }

    /// This process's command line, parsed; exits on a usage error.
    pub fn parse() -> Cli {
        Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|e| e.exit())
    }

    /// `casebook run-all --help`, as the cookbook shows it.
    pub fn run_all_help() -> String {
        let mut cmd = command();
        cmd.find_subcommand_mut("run-all")
            .map(|c| {
                // Wrapped at 100 columns, so the page shows it without a
                // sideways scroll.
                c.clone()
                    .bin_name("casebook run-all")
                    .term_width(100)
                    .render_long_help()
                    .to_string()
            })
            .unwrap_or_default()
    }
}

/// The cookbook as the code generates it now.
pub fn book(root: &Path) -> anyhow::Result<casebook_cookbook::Book> {
    with_inputs(root, cli::run_all_help(), casebook_cookbook::generate)
}

/// What is wrong with the ledger's history (`ledger::HISTORY`) against the
/// ledger and the committed report.
pub fn history_problems(root: &Path) -> anyhow::Result<Vec<String>> {
    with_inputs(root, String::new(), casebook_cookbook::history_problems)
}

/// `f` of the cookbook's inputs: the catalogue, the ledger and `root`.
fn with_inputs<T>(
    root: &Path,
    run_all_help: String,
    f: impl FnOnce(&casebook_cookbook::Inputs) -> T,
) -> T {
    let catalog = catalog();
    f(&casebook_cookbook::Inputs {
        catalog: &catalog,
        undecided: ledger::UNDECIDED,
        history: ledger::HISTORY,
        root,
        run_all_help,
    })
}

#[cfg(test)]
mod tests {
    /// Every command's help ends with the exit codes it gives, and only
    /// commands that exist are given codes.
    #[test]
    fn every_command_says_its_exit_codes() {
        let cmd = super::cli::command();
        cmd.clone().debug_assert();
        let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
        let documented: Vec<&str> = casebook_report::exit::COMMANDS.to_vec();
        let mut sorted = (names.clone(), documented.clone());
        sorted.0.sort_unstable();
        sorted.1.sort_unstable();
        assert_eq!(sorted.0, sorted.1);
        for c in cmd.get_subcommands() {
            let help = c
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            assert!(
                help.starts_with("Exit codes: 0 "),
                "{}: {help}",
                c.get_name()
            );
        }
        assert!(super::cli::run_all_help().contains("13 trials of a run that ended"));
    }
}
