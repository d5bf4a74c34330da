//! Verdicts, computed from what ran and from nothing else.

use casebook_model::{ClaimVerdict, Expect, Outcome, Scenario, Symptom, Termination, Variant};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judgement {
    pub verdict: Verdict,
    /// Every symptom the outcome showed.
    pub observed: Vec<Symptom>,
    /// Why it failed, in one line; `None` on a pass.
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimResult {
    pub id: String,
    pub verdict: ClaimVerdict,
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
        Expect::Fails(symptom) if observed.contains(symptom) => None,
        Expect::Fails(symptom) if observed.is_empty() => Some(format!(
            "the bug no longer reproduces: expected {symptom}, but the variant ran clean \
             (a new driver or toolkit may have changed it; investigate before re-blessing)"
        )),
        Expect::Fails(symptom) => Some(format!("expected {symptom}, observed: {}", list())),
        Expect::Records => match outcome.termination {
            Termination::Completed | Termination::ReturnedError => None,
            ref other => Some(format!("expected it to run to its end, but it {other}")),
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

/// The verdicts of the claims this variant decides.
pub fn claims(scenario: &Scenario, variant: &Variant, outcome: &Outcome) -> Vec<ClaimResult> {
    scenario
        .claims_judged_by(variant.name)
        .map(|claim| ClaimResult {
            id: claim.id.to_owned(),
            verdict: (claim.judge)(outcome),
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
    use casebook_model::{Event, Program, Step};

    use super::*;

    fn noop(_: &mut casebook_model::Recorder) -> anyhow::Result<()> {
        Ok(())
    }

    fn oom_outcome() -> Outcome {
        let mut o = Outcome::empty();
        o.apply(Event::Step(Step {
            call: "cuMemAlloc".into(),
            result: "CUDA_ERROR_OUT_OF_MEMORY".into(),
            tolerated: false,
        }));
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
        let v = Variant::broken(
            "broken",
            Symptom::cuda_error("CUDA_ERROR_OUT_OF_MEMORY"),
            Program::host(noop),
        );
        assert_eq!(judge(&v, &oom_outcome()).verdict, Verdict::Pass);
    }

    #[test]
    fn broken_that_runs_clean_fails_loudly() {
        let v = Variant::broken(
            "broken",
            Symptom::cuda_error("CUDA_ERROR_OUT_OF_MEMORY"),
            Program::host(noop),
        );
        let j = judge(&v, &clean_outcome());
        assert_eq!(j.verdict, Verdict::Fail);
        assert!(j.reason.unwrap().contains("no longer reproduces"));
    }

    #[test]
    fn broken_with_another_failure_fails() {
        let v = Variant::broken(
            "broken",
            Symptom::CheckFailed("x".into()),
            Program::host(noop),
        );
        let j = judge(&v, &oom_outcome());
        assert_eq!(j.verdict, Verdict::Fail);
        assert!(
            j.reason
                .unwrap()
                .contains("observed: CUDA_ERROR_OUT_OF_MEMORY")
        );
    }

    #[test]
    fn a_recording_variant_only_has_to_finish() {
        let v = Variant::as_written("as-written", Program::host(noop));
        assert_eq!(judge(&v, &oom_outcome()).verdict, Verdict::Pass);
        let mut crashed = oom_outcome();
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
