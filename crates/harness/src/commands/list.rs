//! `casebook list`: a header, then one trial a line, in catalogue order,
//! with where it runs and what it expects.

use std::io::Write as _;
use std::process::ExitCode;

use casebook_model::{NEIGHBOURS_ROOM, Scenario};
use casebook_report::Exit;

use crate::runner::{self, Trial};

pub fn run(catalog: &[Scenario], filters: &[String]) -> ExitCode {
    let trials = runner::select(catalog, filters);
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
    for Trial { scenario, variant } in trials {
        let placement = match (
            scenario.runs_alone(variant),
            scenario.runs_alone_under_sanitizer(variant),
        ) {
            _ if scenario.needs_pair() => "alone on two GPUs (a pair)".to_owned(),
            _ if scenario.holds_within(variant, u64::MAX) => format!(
                "beside light ones on {}+ GiB, else alone",
                (variant.holds.unwrap_or(0) + NEIGHBOURS_ROOM).div_ceil(1 << 30)
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
