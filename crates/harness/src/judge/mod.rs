//! Verdicts, computed from what ran and from nothing else: a trial's, held
//! to what its variant declares, and the claims it decides; a sanitizer
//! cell's, in [`cell`].

pub mod cell;

use casebook_model::{Expect, Outcome, Scenario, Symptom, Termination, Variant};
pub use casebook_report::{ClaimResult, Verdict};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub verdict: Verdict,
    /// Every symptom the outcome showed.
    pub observed: Vec<Symptom>,
    /// Why it failed, in one line; `None` on a pass.
    pub reason: Option<String>,
}

/// Holds a variant's outcome to what the variant declared.
pub fn judge(variant: &Variant, outcome: &Outcome) -> Judgement {
    let observed = outcome.symptoms();
    let list = || {
        observed
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let reason = match &variant.expect {
        Expect::Clean if !observed.is_empty() => {
            Some(format!("expected clean, observed: {}", list()))
        }
        Expect::Clean if outcome.termination != Termination::Completed => {
            Some(format!("expected clean, but it {}", outcome.termination))
        }
        Expect::Clean => None,
        Expect::Fails(symptom) if observed.is_empty() => Some(format!(
            "the bug no longer reproduces: expected {symptom}, but the variant ran clean \
             (a new driver or toolkit may have changed it; investigate before re-blessing)"
        )),
        Expect::Fails(symptom) if !observed.contains(symptom) => {
            Some(format!("expected {symptom}, observed: {}", list()))
        }
        Expect::Fails(symptom) => unexplained(variant, symptom, outcome, &observed),
        Expect::Records => match &outcome.termination {
            Termination::Completed => None,
            Termination::ReturnedError => Some(format!(
                "expected it to run to its end, but it stopped: {}",
                outcome.error.as_deref().unwrap_or("an error")
            )),
            other => Some(format!("expected it to run to its end, but it {other}")),
        },
    };
    Judgement {
        verdict: if reason.is_none() {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        observed,
        reason,
    }
}

/// Why a variant that showed its symptom still fails: it also showed
/// something it does not declare (a crash after the error, another error,
/// another failed check), or it stopped on an error that is not its
/// symptom. `None` when everything it showed is accounted for.
fn unexplained(
    variant: &Variant,
    symptom: &Symptom,
    outcome: &Outcome,
    observed: &[Symptom],
) -> Option<String> {
    let declared = |s: &Symptom| s == symptom || variant.then_shows.contains(s);
    let extra: Vec<String> = observed
        .iter()
        .filter(|s| !declared(s))
        .map(ToString::to_string)
        .collect();
    if !extra.is_empty() {
        return Some(format!(
            "showed {symptom}, but also {}, which it does not declare",
            extra.join(", ")
        ));
    }
    if outcome.termination == Termination::ReturnedError {
        let last = outcome
            .steps
            .iter()
            .rev()
            .find(|s| s.is_error() && !s.tolerated);
        let ended_by_symptom =
            last.is_some_and(|s| declared(&Symptom::CudaError(s.result.clone())));
        if !ended_by_symptom {
            return Some(format!(
                "showed {symptom}, then stopped on an error it does not declare: {}",
                outcome.error.as_deref().unwrap_or("unknown")
            ));
        }
    }
    None
}

/// The verdicts of the claims this variant decides.
pub fn claims(scenario: &Scenario, variant: &Variant, outcome: &Outcome) -> Vec<ClaimResult> {
    scenario
        .claims_judged_by(variant.name)
        .map(|claim| ClaimResult {
            id: claim.id.to_owned(),
            verdict: claim.verdict(outcome),
        })
        .collect()
}

/// One line for the table: what was seen.
pub fn observed_text(judgement: &Judgement) -> String {
    if judgement.observed.is_empty() {
        "clean".to_owned()
    } else {
        judgement
            .observed
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use casebook_model::{Event, Program};

    use super::*;

    fn noop(_: &mut casebook_model::Recorder) -> anyhow::Result<()> {
        Ok(())
    }

    fn oom_outcome() -> Outcome {
        let mut o = Outcome::empty().with_step("cuMemAlloc", "CUDA_ERROR_OUT_OF_MEMORY");
        o.apply(Event::End {
            error: Some("out of memory".into()),
        });
        o
    }

    fn clean_outcome() -> Outcome {
        let mut o = Outcome::empty();
        o.apply(Event::End { error: None });
        o
    }

    #[test]
    fn broken_passes_when_it_shows_its_failure() {
        let v = oom();
        assert_eq!(judge(&v, &oom_outcome()).verdict, Verdict::Pass);
    }

    #[test]
    fn broken_that_runs_clean_fails_loudly() {
        let v = oom();
        let j = judge(&v, &clean_outcome());
        assert_eq!(j.verdict, Verdict::Fail);
        assert!(j.reason.unwrap().contains("no longer reproduces"));
    }

    #[test]
    fn broken_with_another_failure_fails() {
        let v = broken_with(Symptom::CheckFailed("x".into()));
        let j = judge(&v, &oom_outcome());
        assert_eq!(j.verdict, Verdict::Fail);
        assert!(
            j.reason
                .unwrap()
                .contains("observed: CUDA_ERROR_OUT_OF_MEMORY")
        );
    }

    fn oom() -> Variant {
        broken_with(Symptom::cuda_error("CUDA_ERROR_OUT_OF_MEMORY"))
    }

    /// A broken variant that declares `symptom` and does nothing.
    fn broken_with(symptom: Symptom) -> Variant {
        Variant::broken("broken", symptom, Program::host(noop))
    }

    fn reason(v: &Variant, o: &Outcome) -> String {
        let j = judge(v, o);
        assert_eq!(j.verdict, Verdict::Fail, "{j:?}");
        j.reason.unwrap()
    }

    #[test]
    fn a_crash_after_the_symptom_fails_the_variant() {
        let mut o = oom_outcome();
        o.termination = Termination::Signaled {
            signal: "SIGSEGV".into(),
        };
        let why = reason(&oom(), &o);
        assert!(why.contains("but also crashed: SIGSEGV"), "{why}");
    }

    #[test]
    fn another_error_after_the_symptom_fails_unless_declared() {
        let mut o = Outcome::empty()
            .with_step("cuMemAlloc", "CUDA_ERROR_OUT_OF_MEMORY")
            .with_step("cuLaunchKernel", "CUDA_ERROR_ILLEGAL_ADDRESS");
        o.apply(Event::End {
            error: Some("illegal address".into()),
        });
        let why = reason(&oom(), &o);
        assert!(why.contains("but also CUDA_ERROR_ILLEGAL_ADDRESS"), "{why}");
        let declared = oom().then_shows(Symptom::cuda_error("CUDA_ERROR_ILLEGAL_ADDRESS"));
        assert_eq!(judge(&declared, &o).verdict, Verdict::Pass);
        assert_eq!(
            declared.expected_text(),
            "fails: CUDA_ERROR_OUT_OF_MEMORY, then CUDA_ERROR_ILLEGAL_ADDRESS"
        );
    }

    #[test]
    fn stopping_on_an_error_that_is_not_the_symptom_fails() {
        // The check failed as declared, then the variant gave up for a
        // reason no recorded call explains.
        let v = broken_with(Symptom::CheckFailed("x".into()));
        let mut o = Outcome::empty();
        o.apply(Event::Check(casebook_model::Check {
            name: "x".into(),
            ok: false,
        }));
        o.apply(Event::End {
            error: Some("could not open /proc/self/status".into()),
        });
        let why = reason(&v, &o);
        assert!(
            why.contains("stopped on an error it does not declare: could not open"),
            "{why}"
        );
    }

    #[test]
    fn a_recording_variant_must_run_to_its_end() {
        let v = Variant::as_written("as-written", Program::host(noop));
        let mut recorded = Outcome::empty().with_step("cudaMalloc", "cudaErrorMemoryAllocation");
        recorded.apply(Event::End { error: None });
        assert_eq!(judge(&v, &recorded).verdict, Verdict::Pass);
        // A failure during setup is not an observation.
        let why = reason(&v, &oom_outcome());
        assert!(why.contains("but it stopped: out of memory"), "{why}");
        let mut crashed = recorded;
        crashed.termination = Termination::Signaled {
            signal: "SIGSEGV".into(),
        };
        assert_eq!(judge(&v, &crashed).verdict, Verdict::Fail);
    }

    #[test]
    fn fixed_must_be_clean_and_complete() {
        let v = Variant::fixed("fixed", Program::host(noop));
        assert_eq!(judge(&v, &clean_outcome()).verdict, Verdict::Pass);
        assert_eq!(judge(&v, &oom_outcome()).verdict, Verdict::Fail);
        let mut exited = Outcome::empty();
        exited.termination = Termination::Exited { code: 0 };
        assert_eq!(judge(&v, &exited).verdict, Verdict::Fail);
    }
}
