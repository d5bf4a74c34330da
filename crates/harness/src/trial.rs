//! One trial: one variant of one scenario, run in its own process, judged.

use casebook_model::{Outcome, Runner, Scenario, Variant};

use crate::gpus::Gpu;
use crate::isolation::{self, ChildCommand};
use crate::judge::{self, ClaimResult, Judgement};
use crate::snapshot::SnapshotView;

#[derive(Debug, Clone)]
pub struct TrialRecord {
    pub outcome: Outcome,
    pub judgement: Judgement,
    pub claims: Vec<ClaimResult>,
    pub view: SnapshotView,
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

/// Runs the variant in a child process and judges what it did. Only a
/// child that cannot be started at all is an error.
pub fn run(scenario: &Scenario, variant: &Variant) -> std::io::Result<TrialRecord> {
    run_on(scenario, variant, None)
}

/// [`run`], with the child pinned to `gpu` (it sees that GPU alone).
pub fn run_on(
    scenario: &Scenario,
    variant: &Variant,
    gpu: Option<&Gpu>,
) -> std::io::Result<TrialRecord> {
    let mut command = command(scenario, variant)?;
    command.env.extend(gpu.map(crate::gpus::pin));
    let child = isolation::run(&command)?;
    let outcome = isolation::outcome(&child);
    let judgement = judge::judge(variant, &outcome);
    let claims = judge::claims(scenario, variant, &outcome);
    let view = SnapshotView::new(scenario, variant, &outcome, &judgement, &claims);
    Ok(TrialRecord {
        outcome,
        judgement,
        claims,
        view,
        gpu: gpu.map(|g| g.index),
    })
}
