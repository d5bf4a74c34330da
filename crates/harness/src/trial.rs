//! One trial: one variant of one scenario, run in its own process, judged.

use casebook_model::{Outcome, Runner, Scenario, Variant};

use crate::isolation::{self, ChildCommand};
use crate::judge::{self, ClaimResult, Judgement};
use crate::snapshot::SnapshotView;

#[derive(Debug, Clone)]
pub struct TrialRecord {
    pub outcome: Outcome,
    pub judgement: Judgement,
    pub claims: Vec<ClaimResult>,
    pub view: SnapshotView,
}

/// Runs the variant in a child process and judges what it did. Only a
/// child that cannot be started at all is an error.
pub fn run(scenario: &Scenario, variant: &Variant) -> std::io::Result<TrialRecord> {
    let target = scenario.trial_name(variant);
    let cmd = match &variant.runner {
        Runner::InProcess(_) => ChildCommand::this_binary(target, variant.timeout)?,
        Runner::External { program, args } => ChildCommand {
            program: isolation::external_program(program),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            target,
            timeout: variant.timeout,
            env: Vec::new(),
        },
    };
    let child = isolation::run(&cmd)?;
    let outcome = isolation::outcome(&child);
    let judgement = judge::judge(variant, &outcome);
    let claims = judge::claims(scenario, variant, &outcome);
    let view = SnapshotView::new(scenario, variant, &outcome, &judgement, &claims);
    Ok(TrialRecord {
        outcome,
        judgement,
        claims,
        view,
    })
}
