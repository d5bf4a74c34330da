//! What `casebook reproduce` found: the trials and claims whose outcome
//! differed between runs of one commit.

use casebook_model::{ClaimVerdict, Role, TrialId};
use serde::{Deserialize, Serialize};

use crate::machine::Environment;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reproduction {
    pub environment: Environment,
    pub runs: usize,
    pub jobs: usize,
    pub wall_seconds: Vec<f64>,
    pub trials: Vec<TrialRuns>,
    /// The trials whose outcome was not the same in every run.
    pub differing: Vec<TrialId>,
    /// The claims whose verdict was not the same in every run, each with
    /// its verdicts, run by run.
    #[serde(default)]
    pub differing_claims: Vec<ClaimRuns>,
    /// The commit the runs were built from, where the reports say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClaimRuns {
    pub claim: String,
    pub verdicts: Vec<ClaimVerdict>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialRuns {
    pub trial: TrialId,
    pub role: Role,
    /// Runs that reached their end.
    pub runs: usize,
    /// Runs in which the trial met its expectation; for a broken variant,
    /// the runs that reproduced the failure.
    pub passed: usize,
    /// Distinct hardware-independent outcomes seen.
    pub distinct_outcomes: usize,
}

impl Reproduction {
    /// Whether any trial's outcome or any claim's verdict differed.
    pub fn flaky(&self) -> bool {
        !self.differing.is_empty() || !self.differing_claims.is_empty()
    }

    /// `a::broken, b::fixed`: the trials that differed.
    pub fn differing_text(&self) -> String {
        let trials: Vec<String> = self.differing.iter().map(|t| t.to_string()).collect();
        trials.join(", ")
    }

    /// `claim (confirmed, refuted); other (…)`: the claims that differed,
    /// each with its verdicts run by run.
    pub fn differing_claims_text(&self) -> String {
        let claims: Vec<String> = self
            .differing_claims
            .iter()
            .map(|c| {
                let verdicts: Vec<&str> = c.verdicts.iter().map(|v| v.word()).collect();
                format!("{} ({})", c.claim, verdicts.join(", "))
            })
            .collect();
        claims.join("; ")
    }
}
