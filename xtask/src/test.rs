//! `cargo xtask test`: the whole suite, anywhere.

use std::io::{BufRead, BufReader};
use std::process::{Command, ExitCode, Stdio};

use crate::toolkit;

#[derive(clap::Args)]
pub struct Args {
    /// Skip `cargo fmt --check` and clippy.
    #[arg(long)]
    no_lint: bool,
    /// Passed on to the test binaries (a filter, `--nocapture`, …).
    #[arg(last = true)]
    test_args: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    toolkit::ensure()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut steps: Vec<(&str, Vec<String>)> = Vec::new();
    if !args.no_lint {
        steps.push(("format", words("fmt --all -- --check")));
        steps.push((
            "lints",
            words("clippy --workspace --all-targets -- -D warnings"),
        ));
    }
    // Every binary linked, casebook-cust included: it links against the
    // libcuda stub generated from cuda.h, since no driver is here.
    steps.push(("binaries", words("build --workspace --bins")));
    let mut test = words("test --workspace");
    if !args.test_args.is_empty() {
        test.push("--".into());
        test.extend(args.test_args);
    }
    steps.push(("tests", test));
    if !args.no_lint {
        // ruff is required under CI; elsewhere a ruff that cannot be had is
        // said, and the rest goes on.
        match crate::ruff::locate() {
            Ok(ruff) => {
                if let Err(e) = crate::ruff::check(&ruff) {
                    eprintln!("error: the Python lint failed: {e:#}");
                    return Ok(ExitCode::from(1));
                }
            }
            Err(e) if std::env::var_os("CI").is_none() => {
                eprintln!("python lint skipped: {e:#}");
            }
            Err(e) => {
                eprintln!("error: no ruff for the Python lint: {e:#}");
                return Ok(ExitCode::from(1));
            }
        }
    }
    let mut totals = Totals::default();
    for (what, argv) in steps {
        eprintln!("== {what}: cargo {}", argv.join(" "));
        let mut cmd = Command::new(&cargo);
        cmd.args(&argv)
            .current_dir(crate::root())
            .stdout(Stdio::piped());
        // Snapshots are never written by a test run: a mismatch fails.
        cmd.env("INSTA_UPDATE", "no");
        let mut child = cmd.spawn()?;
        let stdout = child.stdout.take().expect("piped");
        for line in BufReader::new(stdout).lines() {
            let line = line?;
            println!("{line}");
            totals.add(&line);
        }
        let status = child.wait()?;
        if !status.success() {
            eprintln!("error: {what} failed");
            println!("{}", totals.line());
            return Ok(crate::exit_of(status));
        }
    }
    if let Err(e) = crate::book::check_for_tests() {
        eprintln!("error: the book check failed: {e:#}");
        println!("{}", totals.line());
        return Ok(ExitCode::from(1));
    }
    // One closing line over every test binary, GPU trials ignored counted as skipped.
    println!("{}", totals.line());
    Ok(ExitCode::SUCCESS)
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_owned).collect()
}

#[derive(Default)]
struct Totals {
    passed: u64,
    failed: u64,
    skipped: u64,
}

impl Totals {
    /// Adds a libtest closing line: `test result: ok. 3 passed; 0 failed; 18 ignored; ...`.
    fn add(&mut self, line: &str) {
        let Some(rest) = line.strip_prefix("test result: ") else {
            return;
        };
        for part in rest.split(';') {
            let mut words = part.split_whitespace().rev();
            let (Some(kind), Some(n)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = n.parse::<u64>() else {
                continue;
            };
            match kind {
                "passed" => self.passed += n,
                "failed" => self.failed += n,
                "ignored" => self.skipped += n,
                _ => {}
            }
        }
    }

    fn line(&self) -> String {
        format!(
            "tests: {} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Totals;

    #[test]
    fn totals_add_up_libtest_closing_lines() {
        let mut t = Totals::default();
        t.add("test result: ok. 3 passed; 0 failed; 18 ignored; 0 measured; 0 filtered out; finished in 0.01s");
        t.add("test result: FAILED. 10 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out");
        t.add("running 3 tests");
        assert_eq!(t.line(), "tests: 13 passed, 1 failed, 18 skipped");
    }
}
