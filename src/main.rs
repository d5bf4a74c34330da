//! `casebook`: runs the catalogue on the GPU of this machine.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use casebook_harness::{child, run_all, workspace};
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
        } => {
            workspace::quiet_insta();
            run_all::run_all(
                &catalog,
                &run_all::Options {
                    filters,
                    out,
                    undecided: cuda_casebook::ledger::counts(),
                    jobs: jobs.map(usize::from),
                    partition,
                },
            )
        }
        Command::Matrix { reports, out } => matrix(&reports, &out),
        Command::Collect {
            results,
            partition,
            out,
        } => collect(&catalog, &results, partition, &out),
        Command::Bench {
            selection:
                Selection {
                    filter: Filters { filters },
                    out,
                },
        } => {
            workspace::quiet_insta();
            casebook_harness::bench::run(
                &catalog,
                &casebook_harness::bench::Options {
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
        } if !from.is_empty() => casebook_harness::reproduce::from_reports(&catalog, &from, &out),
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
            casebook_harness::reproduce::run(
                &catalog,
                &casebook_harness::reproduce::Options {
                    filters,
                    out,
                    runs: usize::from(runs),
                    jobs: jobs.map(usize::from),
                },
            )
        }
        Command::List {
            filter: Filters { filters },
        } => list(&catalog, &filters),
        Command::Explain(args) => casebook_explain::cli::run(&args),
        Command::Env => match casebook_harness::environment::detect() {
            Ok(env) => {
                println!("{}", serde_json::to_string_pretty(&env).unwrap_or_default());
                ExitCode::SUCCESS
            }
            Err(reason) => {
                eprintln!("error: {reason}");
                reason.exit().into()
            }
        },
        Command::Docs { check } => docs(&root, check),
        Command::Sanitize {
            filter: Filters { filters },
            out,
            jobs,
            from_cells,
            environment,
        } => {
            workspace::quiet_insta();
            let options = casebook_harness::sanitize::Options { filters, out, jobs };
            match environment {
                Some(env) => {
                    casebook_harness::sanitize::assemble(&catalog, &options, &from_cells, &env)
                }
                None => casebook_harness::sanitize::run(&catalog, &options),
            }
        }
    }
}

/// `casebook list`: a header, then one trial a line, in catalogue order.
fn list(catalog: &[casebook_model::Scenario], filters: &[String]) -> ExitCode {
    use std::io::Write as _;
    let trials = casebook_harness::schedule::select(catalog, filters);
    if trials.is_empty() {
        eprintln!("error: no trial matches {filters:?}");
        return Exit::NoMatch.into();
    }
    let row = |trial: &str, placement: &str, expected: &str| {
        format!("{trial:<44} {placement:<42} {expected}")
            .trim_end()
            .to_owned()
    };
    // Written line by line, stopping quietly where the reader has gone
    // (`casebook list | head`).
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{}", row("trial", "where it runs", "expected")).is_err() {
        return ExitCode::SUCCESS;
    }
    for casebook_harness::schedule::Trial { scenario, variant } in trials {
        let placement = match (
            scenario.runs_alone(variant),
            scenario.runs_alone_under_sanitizer(variant),
        ) {
            _ if scenario.holds_within(variant, u64::MAX) => format!(
                "beside light ones on {}+ GiB, else alone",
                (variant.holds.unwrap_or(0) + casebook_model::NEIGHBOURS_ROOM).div_ceil(1 << 30)
            ),
            (false, _) if variant.creates_contexts => {
                "beside light ones, one such at a time".to_owned()
            }
            (true, true) => "alone".to_owned(),
            (true, false) => "alone, shares under the sanitizer".to_owned(),
            (false, true) => "shares, alone under the sanitizer".to_owned(),
            (false, false) => "shares".to_owned(),
        };
        let line = row(
            &scenario.trial_name(variant),
            &placement,
            &variant.expected_text(),
        );
        if writeln!(out, "{line}").is_err() {
            return ExitCode::SUCCESS;
        }
    }
    ExitCode::SUCCESS
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

/// `casebook matrix`: merges the reports, writes matrix.json and matrix.md.
fn matrix(reports: &[PathBuf], out: &Path) -> ExitCode {
    use casebook_report::matrix;
    let merged = match matrix::merge(reports) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return Exit::CannotMerge.into();
        }
    };
    let written = std::fs::create_dir_all(out)
        .and_then(|()| {
            let json = serde_json::to_string_pretty(&merged).map_err(std::io::Error::other)?;
            std::fs::write(out.join("matrix.json"), json + "\n")
        })
        .and_then(|()| std::fs::write(out.join("matrix.md"), merged.markdown()));
    if let Err(e) = written {
        eprintln!("error: cannot write the matrix to {}: {e}", out.display());
        return Exit::Io.into();
    }
    for c in &merged.columns {
        println!("{}: {}", c.machine, c.files.join(", "));
    }
    let differing = merged.rows.iter().filter(|r| !r.differs.is_empty()).count();
    println!(
        "{} trials on {} machine(s) from commit {}; {} differ between them",
        merged.rows.len(),
        merged.columns.len(),
        merged.commit.get(..7).unwrap_or(&merged.commit),
        differing
    );
    println!("matrix: {}", out.join("matrix.json").display());
    ExitCode::SUCCESS
}

/// `casebook collect`: a shard's report from its trials' results.
fn collect(
    catalog: &[casebook_model::Scenario],
    results: &Path,
    partition: Option<casebook_report::Partition>,
    out: &Path,
) -> ExitCode {
    use casebook_harness::{environment, report, schedule};
    let environment = match environment::detect() {
        Ok(env) => env,
        Err(reason) => {
            eprintln!("error: collect needs the GPU the trials ran on: {reason}");
            return Exit::NoGpu.into();
        }
    };
    let order: Vec<casebook_report::TrialId> = schedule::select(catalog, &[])
        .iter()
        .map(|t| t.name())
        .collect();
    let mut report = match report::collect(results, &order, environment) {
        Ok(r) => r,
        Err(e) => {
            eprintln!(
                "error: cannot read the results in {}: {e}",
                results.display()
            );
            return Exit::Io.into();
        }
    };
    report.run.partition = partition;
    report.run.gpus = run_all::visible_gpus();
    if report
        .results
        .iter()
        .any(|r| r.binding == casebook_model::Binding::Pytorch)
    {
        report.run.pytorch = casebook_harness::pytorch::available()
            .as_ref()
            .ok()
            .cloned();
    }
    println!(
        "{} trial(s) collected from {}: {} passed, {} failed",
        report.summary.trials,
        results.display(),
        report.summary.passed,
        report.summary.failed
    );
    if let Err(e) = run_all::write_outputs(&workspace::root(), out, &report) {
        eprintln!("error: cannot write the report to {}: {e}", out.display());
        return Exit::Io.into();
    }
    run_all::exit_code(&report, &[])
}
