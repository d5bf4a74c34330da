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
    /// The GPU (NVML's index) the child was pinned to, if it was.
    pub gpu: Option<u32>,
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

/// Runs `trial` in its own process, pinned to `gpu` (it sees that GPU
/// alone), under `wrapper` if one is given. Only a process that cannot be
/// started at all is an error.
pub fn execute(
    trial: Trial,
    gpu: Option<&Gpu>,
    wrapper: Option<&dyn Wrapper>,
) -> std::io::Result<Execution> {
    let mut command = command(trial.scenario, trial.variant)?;
    if let Some(wrapper) = wrapper {
        command = wrapper.wrap(trial, command);
    }
    command.env.extend(gpu.map(gpus::pin));
    let run = isolation::run(&command)?;
    let outcome = isolation::outcome(&run);
    Ok(Execution { run, outcome })
}

/// Runs `trial` on `gpu` and judges what it did.
pub fn run(trial: Trial, gpu: Option<&Gpu>) -> std::io::Result<TrialRecord> {
    let Execution { outcome, .. } = execute(trial, gpu, None)?;
    let judgement = judge::judge(trial.variant, &outcome);
    let claims = judge::claims(trial.scenario, trial.variant, &outcome);
    Ok(TrialRecord {
        outcome,
        judgement,
        claims,
        gpu: gpu.map(|g| g.index),
    })
}
