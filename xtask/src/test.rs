//! `cargo xtask test`: the whole suite, anywhere.

use std::collections::BTreeMap;
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
    let mut skips = Skips::default();
    for (what, argv) in steps {
        eprintln!("== {what}: cargo {}", argv.join(" "));
        let mut cmd = Command::new(&cargo);
        cmd.args(&argv)
            .current_dir(crate::project::root())
            .stdout(Stdio::piped());
        // Snapshots are never written by a test run: a mismatch fails.
        cmd.env("INSTA_UPDATE", "no");
        let mut child = cmd.spawn()?;
        let stdout = child.stdout.take().expect("piped");
        for line in BufReader::new(stdout).lines() {
            let line = line?;
            if skips.take(&line) {
                continue;
            }
            // The counts go just before the closing line of their binary,
            // which stays last, as it came.
            if line.starts_with("test result: ") {
                skips.drain().iter().for_each(|l| println!("{l}"));
            }
            println!("{line}");
            totals.add(&line);
            totals.note_awaiting(&line);
        }
        skips.drain().iter().for_each(|l| println!("{l}"));
        let status = child.wait()?;
        if !status.success() {
            eprintln!("error: {what} failed");
            println!("{}", totals.line());
            return Ok(crate::project::exit_of(status));
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

/// The snapshot suite's trials skipped for want of a GPU or of PyTorch,
/// counted by reason instead of listed one a line (161 lines, all alike,
/// where there is no GPU). Every other line, a failure's included, passes
/// through as it came; `cargo test` run directly still lists each trial.
#[derive(Default)]
struct Skips {
    /// Why there is no GPU → the trials skipped for it, and of those, the
    /// PyTorch ones by why there is no PyTorch either.
    no_gpu: BTreeMap<String, (u64, BTreeMap<String, u64>)>,
    /// Why there is no PyTorch → the PyTorch trials skipped for it, where
    /// there is a GPU.
    no_torch: BTreeMap<String, u64>,
    /// Why a pair trial cannot run (fewer than two GPUs visible) → how many.
    no_pair: BTreeMap<String, u64>,
}

/// How the suite words its reasons (`casebook_harness::suite`, `pytorch`).
const NEEDS_GPU: &str = "needs a GPU: ";
const ALSO_TORCH: &str = "; it also needs PyTorch with CUDA: ";
const NEEDS_TORCH: &str = "needs PyTorch with CUDA: ";
/// (`casebook_harness::runner::dispatch::pair_skip_reason`)
const NEEDS_PAIR: &str = "needs 2 GPUs of one host";

impl Skips {
    /// Counts `line` and returns true if it is a trial skipped for want of
    /// a GPU or PyTorch: `test <name> ... ignored (<reason>)`.
    fn take(&mut self, line: &str) -> bool {
        let Some(reason) = line
            .strip_prefix("test ")
            .and_then(|rest| rest.split_once(" ... ignored ("))
            .and_then(|(_, reason)| reason.strip_suffix(')'))
        else {
            return false;
        };
        if let Some(why) = reason.strip_prefix(NEEDS_GPU) {
            let (gpu, torch) = match why.split_once(ALSO_TORCH) {
                Some((gpu, torch)) => (gpu, Some(torch)),
                None => (why, None),
            };
            let (n, torches) = self.no_gpu.entry(gpu.to_owned()).or_default();
            *n += 1;
            if let Some(torch) = torch {
                *torches.entry(torch.to_owned()).or_default() += 1;
            }
            return true;
        }
        if let Some(why) = reason.strip_prefix(NEEDS_TORCH) {
            *self.no_torch.entry(why.to_owned()).or_default() += 1;
            return true;
        }
        if reason.starts_with(NEEDS_PAIR) {
            *self.no_pair.entry(reason.to_owned()).or_default() += 1;
            return true;
        }
        false
    }

    /// One line per reason, and the counts emptied.
    fn drain(&mut self) -> Vec<String> {
        let plural = |n: u64| if n == 1 { "" } else { "s" };
        let mut lines = Vec::new();
        for (why, (n, torches)) in std::mem::take(&mut self.no_gpu) {
            let mut line = format!("{n} GPU trial{} skipped: no GPU ({why})", plural(n));
            for (torch, m) in torches {
                line += &format!(
                    "; of them, {m} PyTorch variant{} also need{} PyTorch with CUDA ({torch})",
                    plural(m),
                    if m == 1 { "s" } else { "" }
                );
            }
            lines.push(line);
        }
        for (why, n) in std::mem::take(&mut self.no_torch) {
            lines.push(format!(
                "{n} PyTorch trial{} skipped: no PyTorch with CUDA ({why})",
                plural(n)
            ));
        }
        for (why, n) in std::mem::take(&mut self.no_pair) {
            lines.push(format!("{n} pair trial{} skipped: {why}", plural(n)));
        }
        lines
    }
}

#[derive(Default)]
struct Totals {
    passed: u64,
    failed: u64,
    skipped: u64,
    /// Pair trials with no snapshot and no evidence yet, as the catalogue's
    /// checks count them (each check names the same ones).
    awaiting: u64,
}

/// How the catalogue's checks word the pair trials that await their
/// two-GPU run (`casebook_harness::suite::checks::AWAITING`), after their
/// count.
const AWAITING: &str = " pair trial(s) await their two-GPU run";

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

    /// Notes a check that names the pair trials awaiting their two-GPU
    /// run: `test catalog::… ... ignored (6 pair trial(s) await …)`.
    fn note_awaiting(&mut self, line: &str) {
        let count = line
            .split_once(" ... ignored (")
            .and_then(|(_, reason)| reason.split_once(AWAITING))
            .and_then(|(n, _)| n.parse::<u64>().ok());
        if let Some(n) = count {
            self.awaiting = self.awaiting.max(n);
        }
    }

    fn line(&self) -> String {
        let awaiting = if self.awaiting > 0 {
            format!(
                "; {}{AWAITING} (the catalogue's checks name them)",
                self.awaiting
            )
        } else {
            String::new()
        };
        format!(
            "tests: {} passed, {} failed, {} skipped{awaiting}",
            self.passed, self.failed, self.skipped
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{Skips, Totals};

    #[test]
    fn trials_skipped_for_want_of_a_gpu_are_counted_once_with_the_reason() {
        let driver = "no CUDA driver: libcuda.so.1 cannot be loaded";
        let torch =
            "python3 cannot run PyTorch on a GPU: ModuleNotFoundError: No module named 'torch'";
        let mut skips = Skips::default();
        for name in ["missing-free::broken", "missing-free::fixed  "] {
            assert!(skips.take(&format!("test {name} ... ignored (needs a GPU: {driver})")));
        }
        assert!(skips.take(&format!(
            "test fork-after-init::broken-py ... ignored (needs a GPU: {driver}; it also needs \
             PyTorch with CUDA: {torch})"
        )));
        for kept in [
            "test catalog::docs-are-fresh            ... FAILED",
            "test catalog::claims-ledger ... ignored (the seed articles are not here)",
            "test gpu::tests::probe ... ignored, needs a GPU: none here",
            "test result: ok. 6 passed; 0 failed; 3 ignored; 0 measured; 0 filtered out",
            "running 9 tests",
        ] {
            assert!(!skips.take(kept), "{kept}");
        }
        assert_eq!(
            skips.drain(),
            [format!(
                "3 GPU trials skipped: no GPU ({driver}); of them, 1 PyTorch variant also needs \
                 PyTorch with CUDA ({torch})"
            )]
        );
        assert!(skips.drain().is_empty());
        assert!(skips.take(&format!(
            "test sticky-error::validated-py ... ignored (needs PyTorch with CUDA: {torch})"
        )));
        assert_eq!(
            skips.drain(),
            [format!(
                "1 PyTorch trial skipped: no PyTorch with CUDA ({torch})"
            )]
        );
        // With one GPU, the pair trials are counted once, with the reason.
        let one = "needs 2 GPUs of one host, both visible to it (a pair trial); this run sees 1";
        for name in ["a::broken", "a::fixed-py"] {
            assert!(skips.take(&format!("test {name} ... ignored ({one})")));
        }
        assert_eq!(skips.drain(), [format!("2 pair trials skipped: {one}")]);
    }

    #[test]
    fn totals_add_up_libtest_closing_lines() {
        let mut t = Totals::default();
        t.add("test result: ok. 3 passed; 0 failed; 18 ignored; 0 measured; 0 filtered out; finished in 0.01s");
        t.add("test result: FAILED. 10 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out");
        t.add("running 3 tests");
        assert_eq!(t.line(), "tests: 13 passed, 1 failed, 18 skipped");
        // Two checks name the same pair trials: counted once.
        for check in [
            "every-variant-has-a-passing-snapshot",
            "evidence-covers-every-variant",
        ] {
            t.note_awaiting(&format!(
                "test catalog::{check} ... ignored (2 pair trial(s) await their two-GPU run (no \
                 snapshot, no evidence yet), every other variant checked: a::broken, a::fixed)"
            ));
        }
        t.note_awaiting("test catalog::claims-ledger ... ignored (the seed articles are not here)");
        assert_eq!(
            t.line(),
            "tests: 13 passed, 1 failed, 18 skipped; 2 pair trial(s) await their two-GPU run (the \
             catalogue's checks name them)"
        );
    }
}
