//! The executor of one trial: the variant's command, pinned to its GPU
//! (and wrapped, where a tool such as compute-sanitizer runs it, as nextest
//! wraps a test in a debugger), run in a process of its own, and what it
//! recorded read back. [`run`] judges it too: the pipeline of a trial,
//! command → isolation → outcome → judge.

use casebook_model::{Outcome, Runner, Scenario, Variant};
use casebook_runtime::isolation::{self, ChildCommand, ChildRun};

use crate::gpus::{self, Gpu};
use crate::judge::{self, ClaimResult, Judgement};
use crate::runner::dispatch::Trial;

/// A trial that ran to its end, judged.
#[derive(Debug, Clone)]
pub struct TrialRecord {
    pub outcome: Outcome,
    pub judgement: Judgement,
    pub claims: Vec<ClaimResult>,
    /// The GPUs (NVML's indices) the child was pinned to, its device 0
    /// first: one, a pair trial's two, or none where it was not pinned.
    pub gpus: Vec<u32>,
}

/// The command that runs `variant` in its own process: this binary
/// re-executed (Rust and C++ variants), the program that serves it, or the
/// Python interpreter.
pub fn command(scenario: &Scenario, variant: &Variant) -> std::io::Result<ChildCommand> {
    let target = scenario.trial_name(variant);
    match &variant.runner {
        Runner::InProcess(_) | Runner::Cpp(_) => ChildCommand::this_binary(target, variant.timeout),
        Runner::External { program } => Ok(ChildCommand {
            program: isolation::external_program(program),
            args: Vec::new(),
            target,
            timeout: variant.timeout,
            env: Vec::new(),
        }),
        Runner::Python { file, function } => Ok(crate::pytorch::command(
            &crate::workspace::root(),
            scenario,
            variant,
            file,
            function,
        )),
    }
}

/// A tool the child runs under: it is given the trial's own command and
/// returns the one to start instead.
pub trait Wrapper {
    fn wrap(&self, trial: Trial, inner: ChildCommand) -> ChildCommand;
}

/// What one trial's process gave back.
pub struct Execution {
    pub run: ChildRun,
    pub outcome: Outcome,
}

/// Runs `trial` in its own process, pinned to `gpus` (it sees those GPUs
/// alone, the first as its device 0; none: unpinned), under `wrapper` if
/// one is given. Only a process that cannot be started at all is an error.
pub fn execute(
    trial: Trial,
    gpus: &[&Gpu],
    wrapper: Option<&dyn Wrapper>,
) -> std::io::Result<Execution> {
    let mut command = command(trial.scenario, trial.variant)?;
    if let Some(wrapper) = wrapper {
        command = wrapper.wrap(trial, command);
    }
    command.env.extend(gpus::pin(gpus));
    let run = isolation::run(&command)?;
    let outcome = isolation::outcome(&run);
    Ok(Execution { run, outcome })
}

/// Runs `trial` on `gpus` and judges what it did.
pub fn run(trial: Trial, gpus: &[&Gpu]) -> std::io::Result<TrialRecord> {
    let Execution { outcome, .. } = execute(trial, gpus, None)?;
    let judgement = judge::judge(trial.variant, &outcome);
    let claims = judge::claims(trial.scenario, trial.variant, &outcome);
    Ok(TrialRecord {
        outcome,
        judgement,
        claims,
        gpus: gpus.iter().map(|g| g.index).collect(),
    })
}
