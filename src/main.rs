//! `casebook`: runs the catalogue on the GPU of this machine.

use std::process::ExitCode;

use casebook_harness::commands::{bench, collect, env, list, matrix, reproduce, run_all, sanitize};
use casebook_harness::{child, workspace};
use casebook_report::Exit;
use cuda_casebook::cli::{Command, Filters, Selection};

fn main() -> ExitCode {
    let catalog = cuda_casebook::catalog();
    casebook_harness::environment::set_toolkit(casebook_kernels::TOOLKIT);
    child::serve_if_child(&catalog);
    let root = workspace::root();
    workspace::pin_insta_root(&root);
    match cuda_casebook::cli::parse().command {
        Command::RunAll {
            selection:
                Selection {
                    filter: Filters { filters },
                    out,
                },
            jobs,
            partition,
            trials,
        } => {
            workspace::quiet_insta();
            let trials = match trials.map(|path| {
                run_all::read_trial_list(&path)
                    .map_err(|e| format!("cannot read the trial list {}: {e}", path.display()))
            }) {
                None => None,
                Some(Ok(names)) => Some(names),
                Some(Err(e)) => {
                    eprintln!("error: {e}");
                    return Exit::NoMatch.into();
                }
            };
            run_all::run(
                &catalog,
                &run_all::Options {
                    filters,
                    out,
                    undecided: cuda_casebook::ledger::counts(),
                    jobs: jobs.map(usize::from),
                    partition,
                    trials,
                },
            )
        }
        Command::Matrix { reports, out } => matrix::run(&reports, &out),
        Command::Collect {
            results,
            partition,
            out,
        } => collect::run(&catalog, &results, partition, &out),
        Command::Bench {
            selection:
                Selection {
                    filter: Filters { filters },
                    out,
                },
        } => {
            workspace::quiet_insta();
            bench::run(
                &catalog,
                &bench::Options {
                    filters,
                    out,
                    undecided: cuda_casebook::ledger::counts(),
                },
            )
        }
        Command::Reproduce {
            from,
            selection: Selection { out, .. },
            ..
        } if !from.is_empty() => reproduce::from_reports(&catalog, &from, &out),
        Command::Reproduce {
            runs,
            selection:
                Selection {
                    filter: Filters { filters },
                    out,
                },
            jobs,
            ..
        } => {
            workspace::quiet_insta();
            reproduce::run(
                &catalog,
                &reproduce::Options {
                    filters,
                    out,
                    runs: usize::from(runs),
                    jobs: jobs.map(usize::from),
                },
            )
        }
        Command::List {
            filter: Filters { filters },
        } => list::run(&catalog, &filters),
        Command::Explain(args) => casebook_explain::cli::run(&args),
        Command::Env => env::run(),
        Command::Docs { check } => docs(&root, check),
        Command::Sanitize {
            filter: Filters { filters },
            out,
            jobs,
            from_cells,
            environment,
        } => {
            workspace::quiet_insta();
            let options = sanitize::Options { filters, out, jobs };
            match environment {
                Some(env) => sanitize::assemble(&catalog, &options, &from_cells, &env),
                None => sanitize::run(&catalog, &options),
            }
        }
    }
}

fn docs(root: &std::path::Path, check: bool) -> ExitCode {
    let book = match cuda_casebook::book(root) {
        Ok(book) => book,
        Err(e) => {
            eprintln!("error: cannot generate the cookbook: {e:#}");
            return Exit::Io.into();
        }
    };
    if check {
        let stale = book.stale(root);
        if stale.is_empty() {
            println!("the cookbook is up to date ({} files)", book.files.len());
            return ExitCode::SUCCESS;
        }
        for path in &stale {
            eprintln!("stale: {}", path.display());
        }
        eprintln!(
            "error: {} generated file(s) are stale: run `cargo xtask docs`",
            stale.len()
        );
        return Exit::DocsStale.into();
    }
    match book.write(root) {
        Ok(n) => {
            println!("wrote {n} files of the cookbook");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot write the cookbook: {e:#}");
            Exit::Io.into()
        }
    }
}
