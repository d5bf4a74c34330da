//! compute-sanitizer as a wrapper around the executor, as nextest wraps a
//! test in a debugger: the trial's own command, with its environment and
//! the mark that it runs under the tool, becomes the program compute-
//! sanitizer starts under one of its five configurations. What the tool
//! wrote to its log, and how the variant ended, make the trial's cell.

use std::path::{Path, PathBuf};
use std::time::Instant;

use casebook_model::{REDUCED, SANITIZER_ENV};
use casebook_report::sanitizer::{Cell, CellVerdict, TOOLS, error_kinds, error_sites, leaked};
use casebook_runtime::isolation::{self, ChildCommand};

use crate::gpus::Gpu;
use crate::judge::cell::{self as judge, time_limit, unreduced};
use crate::runner::dispatch::Trial;
use crate::runner::executor::{self, Execution, Wrapper};

/// compute-sanitizer's exit code when it found errors: its default is 0,
/// so without one nothing is ever flagged.
const ERROR_EXIT: i32 = 86;

/// How many reports of each kind the tool prints.
const PRINT_LIMIT: &str = "20";

/// compute-sanitizer on PATH, else where CUDA installs it.
pub fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("compute-sanitizer"))
        .chain(["/usr/local/cuda/bin/compute-sanitizer".into()])
        .find(|p| p.is_file())
}

/// `compute-sanitizer <its version line>`, or nothing where it will not say.
pub fn version(program: &Path) -> String {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .map(|o| {
            let line = String::from_utf8_lossy(&o.stdout)
                .lines()
                .last()
                .unwrap_or("")
                .trim()
                .to_owned();
            format!("compute-sanitizer {line}")
        })
        .unwrap_or_default()
}

/// compute-sanitizer with one of [`TOOLS`], writing its log to `log`.
struct Sanitizer<'a> {
    program: &'a Path,
    tool: usize,
    log: &'a Path,
}

impl Wrapper for Sanitizer<'_> {
    fn wrap(&self, trial: Trial, inner: ChildCommand) -> ChildCommand {
        let mut args: Vec<String> = TOOLS[self.tool].1.iter().map(|a| (*a).to_owned()).collect();
        args.extend([
            "--error-exitcode".into(),
            ERROR_EXIT.to_string(),
            "--print-limit".into(),
            PRINT_LIMIT.into(),
            "--log-file".into(),
            self.log.display().to_string(),
        ]);
        // The variant's own program, as run-all starts it.
        args.push(inner.program.display().to_string());
        args.extend(inner.args);
        // The variant's own environment (a Python variant's PYTHONPATH and
        // names.toml), and the mark that it runs under the tool.
        let mut env = inner.env;
        env.push((SANITIZER_ENV.to_owned(), "1".to_owned()));
        ChildCommand {
            program: self.program.to_path_buf(),
            args,
            target: inner.target,
            timeout: time_limit(trial.variant),
            env,
        }
    }
}

/// Runs `trial` under tool number `tool` of [`TOOLS`] on `gpus` (a pair
/// trial's two, else one or none), and makes its cell, judged. A cell whose
/// process could not start says so.
pub fn run_cell(program: &Path, trial: Trial, tool: usize, gpus: &[&Gpu]) -> Cell {
    let v = trial.variant;
    let log = tempfile::Builder::new()
        .prefix("casebook-sanitizer-")
        .suffix(".log")
        .tempfile();
    let log_path = log
        .as_ref()
        .map(|l| l.path().to_path_buf())
        .unwrap_or_default();
    let sanitizer = Sanitizer {
        program,
        tool,
        log: &log_path,
    };
    let started = Instant::now();
    let run = executor::execute(trial, gpus, Some(&sanitizer));
    let seconds = started.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let (exit_code, outcome, timed_out) = match &run {
        Ok(Execution { run, outcome }) => (
            run.status.and_then(|s| s.code()),
            Some(outcome),
            run.timed_out,
        ),
        Err(_) => (None, None, false),
    };
    let reduced = outcome.is_some_and(|o| o.fact(REDUCED).is_some());
    let ran_to_its_end = run.as_ref().ok().map(|e| isolation::ended(&e.run));
    let mut tail_start = text.len().saturating_sub(4000);
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let mut cell = Cell {
        scenario: trial.scenario.slug.to_owned(),
        variant: v.name.to_owned(),
        tool: TOOLS[tool].0.to_owned(),
        flagged: exit_code == Some(ERROR_EXIT),
        timed_out,
        kinds: error_kinds(&text),
        sites: error_sites(&text),
        leaked_bytes: leaked(&text),
        reduced,
        provokes: outcome.is_some_and(|o| o.steps.iter().any(|st| st.tolerated && st.is_error())),
        ran_to_its_end,
        judgement: String::new(),
        passed: false,
        seconds,
        exit_code,
        log_tail: text[tail_start..].to_owned(),
        first_error: outcome
            .and_then(|o| o.first_error())
            .map(|step| format!("{}: {}", step.call, step.result)),
        retried_alone: false,
    };
    cell.set_verdict(&judge::judge(v, &cell, run.is_ok()));
    // It shared the GPU on the strength of a reduced form it did not run.
    if unreduced(v, ran_to_its_end == Some(true), reduced) {
        cell.set_verdict(&CellVerdict::Unreduced);
    }
    cell
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::judge::cell::tests::{pytorch_fixed, scenario};

    #[test]
    fn the_tool_starts_the_trial_s_own_command_with_its_environment() {
        let s = scenario(casebook_model::Requirement::GPU, vec![pytorch_fixed()]);
        let trial = Trial {
            scenario: &s,
            variant: &s.variants[0],
        };
        let inner = ChildCommand {
            program: "python3".into(),
            args: vec!["-m".into(), "casebook".into()],
            target: "s::fixed-py".into(),
            timeout: Duration::from_secs(5),
            env: vec![("PYTHONPATH".into(), "here".into())],
        };
        let wrapped = Sanitizer {
            program: Path::new("/usr/local/cuda/bin/compute-sanitizer"),
            tool: 2,
            log: Path::new("/tmp/log"),
        }
        .wrap(trial, inner);
        assert_eq!(
            wrapped.args,
            [
                "--tool",
                "racecheck",
                "--error-exitcode",
                "86",
                "--print-limit",
                "20",
                "--log-file",
                "/tmp/log",
                "python3",
                "-m",
                "casebook"
            ]
        );
        assert_eq!(
            wrapped.env,
            [
                ("PYTHONPATH".to_owned(), "here".to_owned()),
                (SANITIZER_ENV.to_owned(), "1".to_owned())
            ]
        );
        assert_eq!(wrapped.target, "s::fixed-py");
        assert_eq!(wrapped.timeout, time_limit(trial.variant));
    }
}
